import Foundation

/// One reply of an SMTP server (RFC 5321 §4.2): a three-digit code and the text of each of its lines.
struct SMTPReply: Sendable, Equatable, CustomStringConvertible {
    var code: Int
    var lines: [String]

    /// The extensions an `EHLO` reply lists (RFC 5321 §4.1.1.1), keyword upper-cased, with their parameters.
    /// Its first line is the server's greeting, not an extension.
    var extensions: [String: [String]] {
        var extensions: [String: [String]] = [:]
        for line in lines.dropFirst() {
            var words = line.split(separator: " ").map(String.init)
            guard !words.isEmpty else { continue }
            var keyword = words.removeFirst().uppercased()
            // Servers older than RFC 4954 (and some current ones, for their sake) write `AUTH=PLAIN LOGIN`.
            if keyword.hasPrefix("AUTH=") {
                words.insert(String(keyword.dropFirst(5)), at: 0)
                keyword = "AUTH"
            }
            extensions[keyword, default: []] += words.map { $0.uppercased() }
        }
        return extensions
    }

    /// The code and the text, shortened: enough for an operator to see why, not a page of a hostile server's.
    var description: String {
        let text = lines.joined(separator: " ").trimmingCharacters(in: .whitespaces)
        let shown = text.count > 200 ? text.prefix(200) + "…" : Substring(text)
        return shown.isEmpty ? "\(code)" : "\(code) \(shown)"
    }
}
