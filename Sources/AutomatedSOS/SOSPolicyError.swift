import Foundation

/// What is wrong with a policy file, and where: the file, the line and the field (`rules[2].threshold`).
public struct SOSPolicyError: Error, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based; nil when the place cannot be told (the file could not be read).
    public var line: Int?
    /// The field's path, nil for a syntax error.
    public var field: String?
    public var reason: String

    public init(file: String, line: Int?, field: String?, reason: String) {
        self.file = file
        self.line = line
        self.field = field
        self.reason = reason
    }

    /// `policy.json:12: rules[2].threshold: expected a number or one of heart_rate_high, heart_rate_low`
    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        if let field { text += ": \(field)" }
        return text + ": " + reason
    }
}

extension SOSPolicy {
    /// Reads a policy file (`docs/automated-sos.md`), naming the file, the line and the field of an error.
    public static func load(contentsOf url: URL) throws(SOSPolicyError) -> SOSPolicy {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SOSPolicyError(file: url.path, line: nil, field: nil, reason: "cannot read it (\(error.localizedDescription))")
        }
        return try decode(data, file: url.path)
    }

    /// Decodes a policy from JSON; `file` names it in errors.
    public static func decode(_ data: Data, file: String) throws(SOSPolicyError) -> SOSPolicy {
        do {
            return try JSONDecoder().decode(SOSPolicy.self, from: data)
        } catch let error as DecodingError {
            throw locate(error, in: data, file: file)
        } catch {
            throw SOSPolicyError(file: file, line: nil, field: nil, reason: String(describing: error))
        }
    }

    private static func locate(_ error: DecodingError, in data: Data, file: String) -> SOSPolicyError {
        let path: [CodingKey]
        let reason: String
        var missing = false
        switch error {
        case .typeMismatch(_, let context):
            path = context.codingPath
            reason = context.debugDescription
        case .valueNotFound(_, let context):
            path = context.codingPath
            reason = "a value is required here, found null"
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
            reason = "missing (this field has no default)"
            missing = true
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                // Foundation on Linux says only "not valid JSON"; the locator finds where and why.
                if let syntax = JSONLocator.syntaxError(in: data) {
                    return SOSPolicyError(file: file, line: syntax.line, field: nil, reason: "not valid JSON: \(syntax.reason)")
                }
                return SOSPolicyError(file: file, line: nil, field: nil, reason: "not valid JSON: \(context.debugDescription)")
            }
            path = context.codingPath
            reason = context.debugDescription
        @unknown default:
            return SOSPolicyError(file: file, line: nil, field: nil, reason: String(describing: error))
        }
        let components: [JSONLocator.Component] = path.map { key in
            if let index = key.intValue, key.stringValue == String(index) || key.stringValue.hasPrefix("Index ") {
                .index(index)
            } else {
                .key(key.stringValue)
            }
        }
        // A missing field has no line of its own: the line of the object that lacks it.
        let line = JSONLocator.line(of: missing ? Array(components.dropLast()) : components, in: data)
        return SOSPolicyError(file: file, line: line, field: components.isEmpty ? nil : JSONLocator.describe(components), reason: reason)
    }
}
