import Hummingbird

/// Headers every response carries: no MIME sniffing, no referrer leaks, and no caching of API responses
/// (they hold personal data).
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = BrokerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        response.headers[.init("X-Content-Type-Options")!] = "nosniff"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        if response.headers[.cacheControl] == nil, request.uri.path.hasPrefix("/v1/") {
            response.headers[.cacheControl] = "no-store"
        }
        return response
    }
}
