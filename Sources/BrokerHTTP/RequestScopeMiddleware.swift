import BrokerDomain
import Hummingbird

/// Makes the bearer token, client address and request logger available to the API handlers.
/// The client's address is resolved once, here, for the API and the console alike (`TRUSTED_PROXIES`).
package struct RequestScopeMiddleware: RouterMiddleware {
    package typealias Context = BrokerRequestContext
    var trustedProxies = TrustedProxies.none

    package init(trustedProxies: TrustedProxies = .none) {
        self.trustedProxies = trustedProxies
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let scope = RequestScope(
            bearerToken: Self.bearerToken(request.headers[.authorization]),
            clientAddress: trustedProxies.clientAddress(peer: context.remoteAddress?.ipAddress, headers: request.headers),
            logger: context.logger, language: Language.preferred(acceptLanguage: request.headers[.acceptLanguage]))
        return try await RequestScope.$current.withValue(scope) { try await next(request, context) }
    }

    static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
