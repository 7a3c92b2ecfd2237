import Crypto
import Foundation

/// A single-use code that stands in for a TOTP code when the authenticator is lost: 80 random bits, shown
/// once as four groups of four base32 characters (`ABCD-EFGH-IJKL-MNOP`). Only its SHA-256 is stored: with
/// 80 bits of entropy a fast hash leaves nothing to guess, and a leaked table gives no usable code.
package struct RecoveryCode: Sendable, Hashable {
    package static let count = 10

    /// As shown to the account holder.
    package let text: String

    package static func generate() -> RecoveryCode {
        var generator = SystemRandomNumberGenerator()
        let letters = Base32.encode(Data((0..<10).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
        let groups = stride(from: 0, to: letters.count, by: 4).map { start in
            String(letters.dropFirst(start).prefix(4))
        }
        return RecoveryCode(text: groups.joined(separator: "-"))
    }

    /// The stored form of what someone typed: case, spaces and hyphens do not matter. Nil when it cannot be a
    /// recovery code at all.
    package static func hash(ofTyped typed: String) -> Data? {
        let letters = typed.uppercased().filter { $0 != "-" && $0 != " " }
        guard letters.count == 16, Base32.decode(letters) != nil else { return nil }
        return Data(SHA256.hash(data: Data(letters.utf8)))
    }

    var hash: Data { Self.hash(ofTyped: text)! }
}
