import Foundation

/// The mail that carries a password reset token: a link to the console's reset page and the token itself
/// on a `Reset token:` line (for the API, and for tests and the README's walk, which read it; the same line
/// in both languages).
enum PasswordResetMail {
    static func make(to email: String, token: SecretToken, language: Language, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let link = "\(base)/password-reset?token=\(token.text)"
        switch language {
        case .en:
            return OutgoingMail(
                to: email, subject: "Reset your Data4Help password",
                body: """
                    Someone asked to reset the password of your Data4Help account. To choose a new password, open
                    this link within one hour; it works once:
                    \(link)

                    Reset token: \(token.text)

                    Setting a new password signs out every session of your account and revokes its API keys.

                    If you did not ask for this, ignore this mail: your password stays as it is.
                    """)
        case .it:
            return OutgoingMail(
                to: email, subject: "Reimposta la password di Data4Help",
                body: """
                    Qualcuno ha chiesto di reimpostare la password del tuo account Data4Help. Per sceglierne una nuova,
                    apri questo link entro un'ora; funziona una volta sola:
                    \(link)

                    Reset token: \(token.text)
                    (il codice di reimpostazione, da incollare se il link non si apre)

                    La nuova password chiude tutte le sessioni del tuo account e revoca le sue chiavi API.

                    Se non l'hai chiesto tu, ignora questa email: la password resta quella di prima.
                    """)
        }
    }
}
