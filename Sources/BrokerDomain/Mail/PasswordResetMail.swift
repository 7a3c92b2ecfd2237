import Foundation

/// The mail that carries a password reset token: a link to the console's reset page and the token itself
/// on a `Reset token:` line (for the API, and for tests and the README's walk, which read it).
enum PasswordResetMail {
    static func make(to email: String, token: SecretToken, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let body = """
            Someone asked to reset the password of your Data4Help account. To choose a new password, open
            this link within one hour; it works once:
            \(base)/password-reset?token=\(token.text)

            Reset token: \(token.text)

            Setting a new password signs out every session of your account and revokes its API keys.

            If you did not ask for this, ignore this mail: your password stays as it is.
            """
        return OutgoingMail(to: email, subject: "Reset your Data4Help password", body: body)
    }
}
