/// What an API key may do. Whatever the scope, no key manages keys, changes the account's credentials or
/// deletes the account (`AuthenticationGate.sessionOnlyOperations`): a leaked key must not be able to
/// outlive its own revocation by minting others, or lock the company out of its account.
package enum APIKeyScope: String, Sendable, Equatable, CaseIterable {
    /// Everything the company's session may do, but for the session-only operations.
    case full
    /// Only operations that change nothing: reads, plus the cost estimate of a group request.
    case readOnly = "read_only"
}
