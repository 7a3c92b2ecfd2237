import Foundation

/// Actions recorded so far; later capabilities add theirs.
package enum AuditAction {
    package static let accountCreated = "account.created"
    package static let accountActivated = "account.activated"
    package static let accountErased = "account.erased"
    /// An account not activated in time, deleted so its email and fiscal code or VAT number are free again.
    package static let accountExpired = "account.expired"
    /// An account not activated, deleted because a newer registration of its email took its place
    /// (pre-hijacking, issue 27).
    package static let accountReplaced = "account.replaced"
    package static let passwordChanged = "account.password_changed"
    /// A password set with a mailed reset token; every session and API key of the account ended with it.
    package static let passwordReset = "account.password_reset"
    package static let auditorAdded = "auditor.added"
    /// A second factor confirmed (`replaced`: it took the place of a confirmed one), or turned off.
    package static let secondFactorEnabled = "second_factor.enabled"
    package static let secondFactorDisabled = "second_factor.disabled"
    package static let apiKeyCreated = "api_key.created"
    package static let apiKeyRevoked = "api_key.revoked"
    package static let singleRequestCreated = "single_request.created"
    package static let singleRequestAccepted = "single_request.accepted"
    package static let singleRequestRefused = "single_request.refused"
    package static let singleRequestCancelled = "single_request.cancelled"
    package static let subscriptionEnded = "subscription.ended"
    package static let subscriptionExpired = "subscription.expired"
    /// A download of a single request's data; `details.rows` is the number of samples released.
    package static let singleRequestDataReleased = "single_request.data_released"
    package static let groupRequestAccepted = "group_request.accepted"
    package static let groupRequestRefused = "group_request.refused"
    /// A release of a group request's anonymised results (at acceptance, and when a subscription's figures change).
    package static let groupResultsReleased = "group_request.results_released"
    package static let thirdPartyBlocked = "block.added"
    package static let thirdPartyUnblocked = "block.removed"
    /// A person deleted samples of theirs; `details` has the type, the range (`from`, `to`, absent when
    /// open) and the count (`samples`), never a value.
    package static let samplesCorrected = "samples.corrected"
    /// A person stopped or resumed sharing sample types with companies; `details` names the types only.
    package static let sharingChanged = "sharing.changed"
}
