import Foundation

/// The rules a new password must satisfy.
package enum PasswordPolicy {
    /// Counted in characters as people see them (`String.count`), not bytes, so accents and emoji count once.
    package static let minimumLength = 10
    /// An upper bound keeps a hostile client from making the server hash megabytes.
    package static let maximumLength = 128

    /// The first rule `password` breaks, or nil when it is acceptable for the account with `email`.
    package static func violation(password: String, email: String) -> PasswordPolicyViolation? {
        let length = password.count
        if length < minimumLength { return .tooShort }
        if length > maximumLength { return .tooLong }
        // The email is the one thing about the account an attacker is sure to know.
        if password.lowercased() == email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() {
            return .sameAsEmail
        }
        return nil
    }
}
