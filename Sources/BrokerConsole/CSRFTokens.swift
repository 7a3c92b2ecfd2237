import BrokerDomain
import BrokerHTTP
import Crypto
import Foundation
import Logging
import PostgresNIO

/// The console's CSRF tokens: an HMAC, under the `console_csrf_key` server secret, of what identifies the
/// visitor — the session token once signed in, the random `d4h_csrf` cookie before. A page on another site
/// can make a browser send the cookies (SameSite=Strict already stops that in current browsers) but can
/// read neither the cookies nor the token, so it cannot forge a form. Nothing is stored per form.
struct CSRFTokens: Sendable {
    let secret: ServerSecret

    init(client: DatabasePool) { self.secret = ServerSecret("console_csrf_key", client: client) }

    func token(for binding: Binding, logger: Logger) async throws -> String {
        let key = try await secret.key(logger: logger)
        let code = HMAC<SHA256>.authenticationCode(for: Data(("console-csrf|" + binding.text).utf8), using: key)
        return Data(code).base64URLEncoded()
    }

    /// Constant time, so a guess learns nothing from how long the comparison took.
    func accepts(_ submitted: String?, for binding: Binding, logger: Logger) async throws -> Bool {
        guard let submitted else { return false }
        let expected = Array(try await token(for: binding, logger: logger).utf8)
        let given = Array(submitted.utf8)
        guard expected.count == given.count else { return false }
        return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// What a token is bound to.
    enum Binding: Sendable {
        case session(token: String)
        case visitor(cookie: String)

        var text: String {
            switch self {
            case .session(let token): "session|" + token
            case .visitor(let cookie): "visitor|" + cookie
            }
        }
    }
}
