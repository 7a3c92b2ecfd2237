import Crypto
import Foundation

/// A 256-bit random bearer secret. Only its SHA-256 is ever stored, so a database leak reveals no usable token.
package struct SecretToken: Sendable, Hashable {
    /// What the client sends: a kind prefix (so one look tells which table holds it) and base64url of 32 random bytes.
    package let text: String

    package enum Kind: String, Sendable, CaseIterable {
        case session = "d4hs_"
        case apiKey = "d4hk_"
        case activation = "d4ha_"
        /// A password reset's: never a bearer (`AccountService.principal(bearer:)` resolves no caller for it).
        case passwordReset = "d4hr_"
        /// Between a sign-in's password and its second factor (`second_factor_challenges`).
        case secondFactorChallenge = "d4hc_"
    }

    package init(text: String) { self.text = text }

    package static func generate(_ kind: Kind) -> SecretToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return SecretToken(text: kind.rawValue + Data(bytes).base64URLEncoded())
    }

    package var kind: Kind? { Kind.allCases.first { text.hasPrefix($0.rawValue) } }

    /// The stored form.
    package var hash: Data { Data(SHA256.hash(data: Data(text.utf8))) }
}

extension Data {
    package func base64URLEncoded() -> String {
        base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
