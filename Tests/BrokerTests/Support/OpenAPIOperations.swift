import Foundation
import Testing
import Yams

/// One operation of `openapi.yaml`, with what the authorisation matrix needs to call it.
struct OpenAPIOperation: Sendable, CustomStringConvertible {
    /// Upper case, as on the wire.
    let method: String
    /// The path template, e.g. `/v1/single-requests/{id}`.
    let path: String
    let operationID: String
    /// `x-roles`; nil when the operation declares none.
    let roles: [String]?
    /// Whether the operation has a non-empty `security` requirement (its own or the document's).
    let requiresToken: Bool
    /// The names of the path parameters (path-level and operation-level).
    let pathParameters: [String]
    /// Each required query parameter with a value its schema accepts.
    let requiredQuery: [(name: String, value: String)]
    /// The request body, if the operation takes one.
    let body: Body?

    struct Body: Sendable {
        let contentType: String
        /// A body the generated decoder accepts (required fields only, each a value of its schema's type):
        /// it gets past decoding, not past the handler's validation.
        let decodable: String
        /// A body that gets past nothing: `{}` for JSON, one byte otherwise.
        let minimal: String
    }

    /// `METHOD path`, the key the server and the tests use for an operation.
    var key: String { "\(method) \(path)" }
    var description: String { "\(key) [\(operationID)]" }

    /// The path with each parameter replaced by `ids[name]`.
    func path(with ids: [String: String]) -> String {
        pathParameters.reduce(path) { path, name in path.replacingOccurrences(of: "{\(name)}", with: ids[name] ?? "{\(name)}") }
    }

    /// The required query parameters as `?a=b&…`, or nothing.
    var requiredQueryString: String {
        guard !requiredQuery.isEmpty else { return "" }
        return "?"
            + requiredQuery.map { "\($0.name)=\($0.value.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? $0.value)" }
            .joined(separator: "&")
    }
}

/// Reads the operations from the repository's `openapi.yaml` (the file the server is generated from and serves).
enum OpenAPIOperations {
    static let methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

    /// `Sources/BrokerOpenAPI/openapi.yaml`, found from this file's place in the repository.
    static var documentURL: URL {
        URL(fileURLWithPath: #filePath)  // Tests/BrokerTests/Support/OpenAPIOperations.swift
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/BrokerOpenAPI/openapi.yaml")
    }

    /// Every operation, in the order of the document.
    static func load() throws -> [OpenAPIOperation] {
        let text = try String(contentsOf: documentURL, encoding: .utf8)
        let document = try #require(try Yams.compose(yaml: text), "openapi.yaml is empty")
        let paths = try #require(document["paths"]?.mapping, "openapi.yaml has no paths")
        let globalSecurity = document["security"]
        var operations: [OpenAPIOperation] = []
        for (pathNode, item) in paths {
            let path = try #require(pathNode.string)
            let pathLevel = item["parameters"]?.sequence.map(Array.init) ?? []
            for method in methods {
                guard let operation = item[method] else { continue }
                let parameters = try (pathLevel + (operation["parameters"]?.sequence.map(Array.init) ?? [])).map { try resolve($0, in: document) }
                let security = operation["security"] ?? globalSecurity
                operations.append(
                    OpenAPIOperation(
                        method: method.uppercased(),
                        path: path,
                        operationID: operation["operationId"]?.string ?? "(no operationId)",
                        roles: operation["x-roles"]?.sequence.map { $0.compactMap(\.string) },
                        requiresToken: (security?.sequence?.count ?? 0) > 0,
                        pathParameters: parameters.filter { $0["in"]?.string == "path" }.compactMap { $0["name"]?.string },
                        requiredQuery: try parameters.filter { $0["in"]?.string == "query" && $0["required"]?.bool == true }.map {
                            (name: try #require($0["name"]?.string), value: try queryValue(example(for: $0["schema"], in: document)))
                        },
                        body: try body(of: operation, in: document)))
            }
        }
        return operations
    }

    private static func body(of operation: Node, in document: Node) throws -> OpenAPIOperation.Body? {
        guard let requestBody = operation["requestBody"], let content = try resolve(requestBody, in: document)["content"]?.mapping
        else { return nil }
        let types = content.keys.compactMap(\.string)
        // JSON when offered (the body every JSON client sends), else the first type listed.
        let contentType = try #require(types.first { $0 == "application/json" } ?? types.first, "a request body without content")
        if contentType == "application/json" {
            let value = try example(for: content[contentType]?["schema"], in: document)
            let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
            return .init(contentType: contentType, decodable: String(decoding: data, as: UTF8.self), minimal: "{}")
        }
        return .init(contentType: contentType, decodable: "x", minimal: "x")
    }

    /// The value of a `$ref` (to anywhere in this document), or the node itself.
    static func resolve(_ node: Node, in document: Node, depth: Int = 0) throws -> Node {
        guard let reference = node["$ref"]?.string else { return node }
        try #require(depth < 20, "a $ref cycle at \(reference)")
        try #require(reference.hasPrefix("#/"), "an external $ref: \(reference)")
        var target: Node? = document
        for part in reference.dropFirst(2).split(separator: "/") {
            target = target?[String(part).replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")]
        }
        return try resolve(try #require(target, "unresolved \(reference)"), in: document, depth: depth + 1)
    }

    /// A JSON value of `schema`'s type: the first enum value, required properties only, one array item,
    /// strings in the schema's format and at least its minimum length.
    static func example(for schema: Node?, in document: Node, depth: Int = 0) throws -> Any {
        guard let schema, depth < 20 else { return "x" }
        let resolved = try resolve(schema, in: document)
        if let first = resolved["enum"]?.sequence?.first { return first.int ?? first.float ?? first.string ?? "x" }
        // `type` is a name or a list of names (`[string, 'null']`): the first one that is not null.
        let types = resolved["type"]?.sequence.map { $0.compactMap(\.string) } ?? resolved["type"]?.string.map { [$0] } ?? []
        let type = types.first { $0 != "null" } ?? (resolved["properties"] != nil ? "object" : "string")
        switch type {
        case "object":
            var object: [String: Any] = [:]
            for name in resolved["required"]?.sequence?.compactMap(\.string) ?? [] {
                object[name] = try example(for: resolved["properties"]?[name], in: document, depth: depth + 1)
            }
            return object
        case "array":
            let count = max(1, resolved["minItems"]?.int ?? 1)
            return try (0..<count).map { _ in try example(for: resolved["items"], in: document, depth: depth + 1) }
        case "integer":
            return resolved["minimum"]?.int ?? 1
        case "number":
            return resolved["minimum"]?.float ?? 1
        case "boolean":
            return true
        default:
            switch resolved["format"]?.string {
            case "date-time": return "2026-03-01T08:00:00Z"
            case "date": return "2026-03-01"
            case "uuid": return UUID().uuidString.lowercased()
            default: return String(repeating: "x", count: max(1, resolved["minLength"]?.int ?? 1))
            }
        }
    }

    private static func queryValue(_ value: Any) throws -> String {
        switch value {
        case let text as String: text
        case let number as Int: String(number)
        case let number as Double: String(number)
        case let flag as Bool: String(flag)
        default: throw TestSetupError("a required query parameter that is not a scalar: \(value)")
        }
    }
}
