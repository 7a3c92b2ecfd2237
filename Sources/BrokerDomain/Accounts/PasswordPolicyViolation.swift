import Foundation

/// A rule of `PasswordPolicy` that a password breaks.
package enum PasswordPolicyViolation: Error, Sendable, Hashable {
    case tooShort
    case tooLong
    case sameAsEmail

    /// Suitable as a field-level message in a 422 answer.
    package var message: String {
        switch self {
        case .tooShort: "must be at least \(PasswordPolicy.minimumLength) characters"
        case .tooLong: "must be at most \(PasswordPolicy.maximumLength) characters"
        case .sameAsEmail: "must not be the same as the email address"
        }
    }
}
