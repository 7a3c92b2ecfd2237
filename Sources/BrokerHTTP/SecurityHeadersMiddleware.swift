import BrokerDomain
import HTTPTypes
import Hummingbird

/// Headers every response carries. The middleware sits outside `ProblemMiddleware`, so error answers (401,
/// 404, 405, 413, 422, 429 …) get them too, and streamed downloads still begin with a head it can amend.
///
/// - `X-Content-Type-Options: nosniff`: a browser never guesses a type (a CSV of stored text is not HTML).
/// - `X-Frame-Options: DENY` (and CSP `frame-ancestors 'none'` for current browsers): nothing can be framed.
/// - `Content-Security-Policy`: one strict policy on every response, not only on HTML. The API sends no
///   HTML (JSON, problem+json, CSV, YAML, Prometheus text), so none of its responses needs to load a script,
///   style, image, base URL or form target; should a browser be led to render one as a document anyway, it
///   can run nothing. One policy everywhere is simpler than choosing by Content-Type and fails closed: the
///   web console's pages set their own, looser policy on purpose (`Console.contentSecurityPolicy`; a
///   handler's own is kept).
/// - `Referrer-Policy: no-referrer`.
/// - `Cache-Control: no-store` under `/v1/`, whose answers hold personal data (a handler's own is kept).
/// - `Strict-Transport-Security` only when this server itself terminates TLS: browsers ignore it over plain
///   HTTP (RFC 6797 §8.1), and behind a TLS proxy the proxy is the one to send it.
package struct SecurityHeadersMiddleware: RouterMiddleware {
    package typealias Context = BrokerRequestContext

    /// Whether responses travel over TLS this server terminates (`TLS_CERTIFICATE`/`TLS_KEY`).
    var servesTLS = false

    package init(servesTLS: Bool = false) {
        self.servesTLS = servesTLS
    }

    static let contentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    /// One year, the usual minimum for HSTS preload lists. No `includeSubDomains`: other hosts under the same
    /// domain are not this server's to decide for.
    static let strictTransportSecurity = "max-age=31536000"
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[Self.xFrameOptions] = "DENY"
        response.headers[Self.referrerPolicy] = "no-referrer"
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        }
        if response.headers[.cacheControl] == nil, request.uri.path.hasPrefix("/v1/") {
            response.headers[.cacheControl] = "no-store"
        }
        if servesTLS {
            response.headers[.strictTransportSecurity] = Self.strictTransportSecurity
        }
        return response
    }
}
