import Foundation

/// The mail to an account's owner after its password was reset: if it was not them, someone holds their
/// mailbox or a link from it, and they should know at once.
enum PasswordChangedMail {
    static func make(to email: String, language: Language, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        switch language {
        case .en:
            return OutgoingMail(
                to: email, subject: "Your Data4Help password was changed",
                body: """
                    The password of your Data4Help account was just reset with a link mailed to this address. Every
                    session of the account was signed out and its API keys were revoked.

                    If it was you, sign in with the new password at
                    \(base)/login

                    If it was not you, reset it again at once at
                    \(base)/password-reset
                    and check who can read this mailbox.
                    """)
        case .it:
            return OutgoingMail(
                to: email, subject: "La password di Data4Help è cambiata",
                body: """
                    La password del tuo account Data4Help è stata appena reimpostata con un link inviato a questo
                    indirizzo. Tutte le sessioni dell'account sono state chiuse e le sue chiavi API revocate.

                    Se sei stato tu, accedi con la nuova password da
                    \(base)/login

                    Se non sei stato tu, reimpostala subito da
                    \(base)/password-reset
                    e controlla chi può leggere questa casella di posta.
                    """)
        }
    }
}
