import BrokerDomain
import BrokerOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Authenticates the caller of every non-public operation before its generated handler runs. The generated
/// code decodes the query and the body before it calls `BrokerAPI`, so without this gate a request with no
/// usable token but an invalid body or query answered 400/422 instead of 401. Roles (403) are each service's
/// rule; the handler hands it the principal found here (`RequestScope.principal`) instead of looking it up again.
struct AuthenticationGate: Sendable {
    /// `METHOD path` (as `openapi.yaml` writes it) of the operations anyone may call: those without
    /// `security` in `openapi.yaml` (`x-roles: [anyone]`). Everything else needs a token, so a new
    /// operation is closed until it is listed here; `AuthorizationMatrixTests` checks this list against the spec.
    static let publicOperations: Set<String> = [
        "POST /v1/users", "POST /v1/third-parties", "POST /v1/activations", "POST /v1/accounts/activation-mail", "POST /v1/sessions",
        "POST /v1/password-resets", "POST /v1/password-resets/{token}",
        "POST /v1/sessions/second-factor",
        "GET /health/live", "GET /health/ready", "GET /metrics", "GET /openapi.yaml",
        // Track4Run's public side (R42, R49–R51): anyone lists runs and watches them without signing in.
        "GET /v1/runs", "GET /v1/runs/{id}", "GET /v1/runs/{id}/results", "GET /v1/runs/{id}/live", "GET /v1/runs/{id}/live/events",
        // Consent receipts are checked by whoever holds one: the key set and the check need no account.
        "GET /v1/consent-receipts/keys", "POST /v1/consent-receipts/verification",
    ]

    /// Operations only a signed-in session may call, whatever an API key's scope: managing keys (a key that
    /// could mint keys would outlive its own revocation), changing the account's credentials and deleting it.
    static let sessionOnlyOperations: Set<String> = [
        "POST /v1/api-keys", "DELETE /v1/api-keys/{id}", "PATCH /v1/me", "DELETE /v1/me",
        "POST /v1/me/second-factor", "POST /v1/me/second-factor/confirmation", "DELETE /v1/me/second-factor",
        // Where the company's events go, and the secret that signs them: a leaked key must not be able to
        // redirect them to itself, a setting that would outlive the key's revocation.
        "PUT /v1/webhook", "DELETE /v1/webhook",
    ]

    /// Operations other than GET that a `read_only` key may call: they change nothing the company does not
    /// own (the estimate reads no data and spends no budget; logging out revokes the key itself).
    static let readOnlyExceptions: Set<String> = ["POST /v1/group-requests/estimate", "DELETE /v1/sessions/current"]

    /// What an auditor without a confirmed second factor may still call: enrol, read their account, sign
    /// out. Everything else answers 403 `second-factor-required`, decided here, where every operation's
    /// caller is resolved, rather than in each auditor's capability.
    static let enrolmentOperations: Set<String> = [
        "GET /v1/me", "GET /v1/me/second-factor", "POST /v1/me/second-factor", "POST /v1/me/second-factor/confirmation",
        "DELETE /v1/sessions/current",
    ]

    /// Uploads only a person may send, refused before their body is read rather than by the service after
    /// it: a FHIR Bundle body is decoded into a generic JSON tree first, which no one else should get to cost.
    static let peopleOnlyUploads: Set<String> = ["POST /v1/me/samples"]

    let accounts: AccountService
    let bundleDecodes = BundleDecodeSlots()

    /// Refuses an API key an operation its scope, or any key, may not call; sessions pass.
    static func checkScope(of principal: Principal, method: HTTPRequest.Method, path: String) throws {
        guard let scope = principal.credential.apiKeyScope else { return }
        let operation = "\(method.rawValue) \(path)"
        if sessionOnlyOperations.contains(operation) { throw APIKeyError.sessionRequired }
        if scope == .readOnly, method != .get, method != .head, !readOnlyExceptions.contains(operation) {
            throw APIKeyError.readOnlyScope
        }
    }

    /// `handler`, behind a 401 unless the operation is public (whatever its answer's type: an `HTTPBody` or,
    /// for a body of shared buffers, Hummingbird's own).
    func guarding<Answer: Sendable>(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> Answer, method: HTTPRequest.Method,
        path: String
    ) -> @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> Answer {
        guard !Self.publicOperations.contains("\(method.rawValue) \(path)") else { return handler }
        let accounts = accounts
        let bundleDecodes = bundleDecodes
        let operation = "\(method.rawValue) \(path)"
        return { request, body, metadata in
            var scope = RequestScope.current
            guard let token = scope.bearerToken, let principal = try await accounts.principal(bearer: token, logger: scope.logger)
            else { throw AccountError.unauthenticated }
            try Self.checkScope(of: principal, method: method, path: path)
            if principal.mustEnrolSecondFactor, !Self.enrolmentOperations.contains("\(method.rawValue) \(path)") {
                throw SecondFactorError.enrolmentRequired
            }
            if Self.peopleOnlyUploads.contains(operation), principal.role != .user { throw SampleError.notAUser }
            scope.principal = principal
            guard BundleDecodeSlots.holdsBundle(request, operation: operation) else {
                return try await RequestScope.$current.withValue(scope) { try await handler(request, body, metadata) }
            }
            return try await bundleDecodes.run {
                try await RequestScope.$current.withValue(scope) { try await handler(request, body, metadata) }
            }
        }
    }
}
