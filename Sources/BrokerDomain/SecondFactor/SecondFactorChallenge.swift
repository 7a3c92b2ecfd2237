import Foundation

/// What a right password gives an account with a second factor: a short-lived, single-use token that
/// `AccountService.completeLogIn` exchanges, with a current code or a recovery code, for a session.
package struct SecondFactorChallenge: Sendable {
    package var token: SecretToken
    package var expiresAt: Date
}
