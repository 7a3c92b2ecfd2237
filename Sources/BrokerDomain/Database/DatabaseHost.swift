import Foundation

/// One server of a `DatabaseURL`: `host`, `host:port`, `[v6 address]:port`.
package struct DatabaseHost: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The host's text is not quoted in an error: a password with a `/` in it would be cut there and read
    /// as part of a host, and must not reach a log.
    init(_ text: String, variable: String = "DATABASE_URL") throws {
        let invalid = ConfigurationError.invalid(variable, "has an empty or malformed host in its host list")
        var name = Substring(text)
        var portText: Substring?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { throw invalid }
            let rest = name[name.index(after: close)...]
            name = name[name.index(after: name.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw invalid }
                portText = rest.dropFirst()
            }
        } else if let colon = name.firstIndex(of: ":") {
            portText = name[name.index(after: colon)...]
            name = name[..<colon]
        }
        guard !name.isEmpty, !name.contains(where: { $0 == "/" || $0 == "@" || $0 == " " }) else { throw invalid }
        let port = try portText.map { text in
            guard let port = Int(text), (1...65535).contains(port) else {
                throw ConfigurationError.invalid(variable, "has a port that is not a number from 1 to 65535")
            }
            return port
        }
        self.host = String(name).removingPercentEncoding ?? String(name)
        self.port = port ?? 5432
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
