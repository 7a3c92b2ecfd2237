import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird
import Logging

/// Who is at the browser: their session (from the `d4h_session` cookie) if it is still valid, and what
/// their CSRF tokens are bound to.
struct Visitor: Sendable {
    var principal: Principal?
    var binding: CSRFTokens.Binding
    /// A `d4h_csrf` value to set, when the visitor has neither a session nor that cookie yet.
    var newVisitorCookie: String?

    static func resolve(_ cookies: Cookies, accounts: AccountService, logger: Logger) async throws -> Visitor {
        if let token = cookies[Console.sessionCookie]?.value, !token.isEmpty,
            let principal = try await accounts.principal(bearer: token, logger: logger),
            // An API key pasted into the cookie is not a browser session.
            case .session = principal.credential
        {
            return Visitor(principal: principal, binding: .session(token: token))
        }
        if let cookie = cookies[Console.visitorCookie]?.value, cookie.count >= 32, cookie.count <= 64 {
            return Visitor(binding: .visitor(cookie: cookie))
        }
        var generator = SystemRandomNumberGenerator()
        let fresh = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64URLEncoded()
        return Visitor(binding: .visitor(cookie: fresh), newVisitorCookie: fresh)
    }
}
