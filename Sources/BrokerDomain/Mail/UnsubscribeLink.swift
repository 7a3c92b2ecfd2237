import Crypto
import Foundation

/// The one-click unsubscribe token of a notification (RFC 8058): the account and the kind, and an HMAC of
/// both under `mail_unsubscribe_key`. It needs no sign-in, so it must be good for exactly one account and
/// one kind: changing either breaks the HMAC, and a token from someone else's mail names their account,
/// not yours. It turns a notification off and nothing else; turning it on again needs a sign-in.
package struct UnsubscribeLink: Sendable, Equatable {
    package var accountID: UUID
    package var kind: MailKind

    package init(accountID: UUID, kind: MailKind) {
        self.accountID = accountID
        self.kind = kind
    }

    /// `<account uuid>.<kind>.<base64url HMAC>`.
    package func token(key: SymmetricKey) -> String {
        let id = accountID.uuidString.lowercased()
        return "\(id).\(kind.rawValue).\(Self.mac(id: id, kind: kind.rawValue, key: key))"
    }

    /// The link a token stands for, or nil when it is malformed or its HMAC does not match.
    package static func parse(_ token: String, key: SymmetricKey) -> UnsubscribeLink? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let id = UUID(uuidString: parts[0]), parts[0] == id.uuidString.lowercased(),
            let kind = MailKind(rawValue: parts[1]), kind.canBeTurnedOff
        else { return nil }
        let expected = Array(mac(id: parts[0], kind: parts[1], key: key).utf8)
        let given = Array(parts[2].utf8)
        // Compared in constant time: the token is a credential.
        guard expected.count == given.count, zip(expected, given).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 else { return nil }
        return UnsubscribeLink(accountID: id, kind: kind)
    }

    private static func mac(id: String, kind: String, key: SymmetricKey) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("unsubscribe|\(id)|\(kind)".utf8), using: key)
        return Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
