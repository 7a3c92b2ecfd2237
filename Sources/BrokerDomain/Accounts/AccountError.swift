import Foundation

/// Everything that can go wrong with accounts, sessions and keys, each with the status the contract gives it.
package enum AccountError: Error, Equatable {
    case invalid([FieldError])
    case emailTaken
    case fiscalCodeTaken
    case vatNumberTaken
    case activationTokenUnknown
    case activationTokenExpired
    /// A password reset token that does not exist, was used, was replaced by a newer one, or is no such token.
    case passwordResetTokenUnknown
    case passwordResetTokenExpired
    /// The account was not activated within `ACTIVATION_EXPIRY_HOURS` and is gone (or going).
    case registrationExpired(hours: Int)
    case wrongCredentials
    case notActivated
    case tooManyAttempts(retryAfterSeconds: Int)
    case unauthenticated
    case wrongPassword
    case apiKeyNotFound
}
