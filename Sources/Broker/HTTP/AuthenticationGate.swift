import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Authenticates the caller of every non-public operation before its generated handler runs. The generated
/// code decodes the query and the body before it calls `BrokerAPI`, so without this gate a request with no
/// usable token but an invalid body or query answered 400/422 instead of 401. Roles (403) stay with each
/// handler, which reuses the principal found here (`RequestScope.principal`) instead of looking it up again.
struct AuthenticationGate: Sendable {
    /// `METHOD path` (as `openapi.yaml` writes it) of the operations anyone may call: those without
    /// `security` in `openapi.yaml` (`x-roles: [anyone]`). Everything else needs a token, so a new
    /// operation is closed until it is listed here; `AuthorizationMatrixTests` checks this list against the spec.
    static let publicOperations: Set<String> = [
        "POST /v1/users", "POST /v1/third-parties", "POST /v1/activations", "POST /v1/accounts/activation-mail", "POST /v1/sessions",
        "GET /health/live", "GET /health/ready", "GET /metrics", "GET /openapi.yaml",
    ]

    let accounts: AccountService

    /// `handler`, behind a 401 unless the operation is public.
    func guarding(_ handler: @escaping StreamingEndpoints.Handler, method: HTTPRequest.Method, path: String)
        -> StreamingEndpoints.Handler
    {
        guard !Self.publicOperations.contains("\(method.rawValue) \(path)") else { return handler }
        let accounts = accounts
        return { request, body, metadata in
            var scope = RequestScope.current
            guard let token = scope.bearerToken, let principal = try await accounts.principal(bearer: token, logger: scope.logger)
            else { throw AccountError.unauthenticated }
            scope.principal = principal
            return try await RequestScope.$current.withValue(scope) { try await handler(request, body, metadata) }
        }
    }
}
