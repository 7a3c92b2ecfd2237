import BrokerDomain
import Logging

/// What the generated API handlers need from the HTTP request but the OpenAPI types do not carry:
/// the bearer token, the client's address and the request's logger (with its request id).
/// Set by `RequestScopeMiddleware` for the duration of one request.
package struct RequestScope: Sendable {
    package var bearerToken: String?
    package var clientAddress: String
    package var logger: Logger
    /// The caller, once `AuthenticationGate` has authenticated the bearer token.
    package var principal: Principal? = nil
    /// The language the client's `Accept-Language` prefers among ours; nil when it names none (a
    /// registration then takes `Language.fallback`).
    package var language: Language? = nil

    @TaskLocal package static var current = RequestScope(
        bearerToken: nil, clientAddress: "unknown", logger: Logger(label: "data4help.unscoped"))
}
