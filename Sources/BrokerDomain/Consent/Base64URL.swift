import Foundation

/// Base64url without padding (RFC 4648 §5, as JOSE uses it: RFC 7515 §2). Decoding is strict: only the
/// url alphabet, no padding, no white space, and no length a canonical encoding never has, so one receipt
/// has exactly one spelling and a changed character is never read as the same bytes.
package enum Base64URL {
    package static func encode(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func decode(_ text: some StringProtocol) -> Data? {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        guard text.allSatisfy(allowed.contains), text.count % 4 != 1 else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        guard let data = Data(base64Encoded: standard), encode(data) == String(text) else { return nil }
        return data
    }
}
