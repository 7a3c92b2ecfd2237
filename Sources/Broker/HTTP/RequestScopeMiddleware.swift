import Hummingbird

/// Makes the bearer token, client address and request logger available to the API handlers.
struct RequestScopeMiddleware: RouterMiddleware {
    typealias Context = BrokerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let scope = RequestScope(
            bearerToken: Self.bearerToken(request.headers[.authorization]),
            clientAddress: context.remoteAddress?.ipAddress ?? "unknown",
            logger: context.logger)
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
