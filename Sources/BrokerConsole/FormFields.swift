import BrokerDomain
import BrokerHTTP
import Foundation

/// The fields of an `application/x-www-form-urlencoded` body (or a query string). A name may repeat
/// (checkboxes); `[name]` gives the first value, `values(name)` all of them.
struct FormFields: Sendable {
    private(set) var pairs: [(name: String, value: String)] = []

    init() {}

    init(urlEncoded text: String) {
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let halves = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(halves[0])
            let value = halves.count > 1 ? Self.decode(halves[1]) : ""
            pairs.append((name, value))
        }
    }

    /// The first value of `name`, trimmed; nil when absent or blank.
    subscript(_ name: String) -> String? {
        guard let value = pairs.first(where: { $0.name == name })?.value.trimmingCharacters(in: .whitespacesAndNewlines),
            !value.isEmpty
        else { return nil }
        return value
    }

    /// A password as typed: never trimmed (spaces may be part of it).
    func raw(_ name: String) -> String { pairs.first(where: { $0.name == name })?.value ?? "" }

    func values(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

    /// The submitted values to show again in a re-rendered form; passwords and the CSRF token never are.
    func echo(except hidden: Set<String> = []) -> [String: String] {
        var echoed: [String: String] = [:]
        for (name, value) in pairs where !hidden.contains(name) && name != "_csrf" && !Self.isSecret(name) {
            echoed[name] = echoed[name] ?? value
        }
        return echoed
    }

    /// Passwords and the webhook's signing secret: never written back into a page.
    static func isSecret(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.contains("password") || lowered.contains("secret")
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
