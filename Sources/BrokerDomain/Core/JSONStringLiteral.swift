import Foundation

/// A text as a JSON string literal, for the encoders that write JSON by hand (FHIR downloads, webhook bodies).
enum JSONStringLiteral {
    /// `text` quoted, escaped as JSON requires (slashes left as they are). A text of lowercase letters, digits, dots
    /// and underscores (a webhook event's type, at every post) needs no escaping and is not handed to a `JSONEncoder`.
    static func of(_ text: String) -> String {
        let plain = text.utf8.allSatisfy {
            $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0)
        }
        if plain { return "\"\(text)\"" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding a String cannot fail.
        return String(decoding: try! encoder.encode(text), as: UTF8.self)
    }
}
