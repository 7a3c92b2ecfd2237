import Foundation

/// The mail to an account's owner when someone registers with what it already holds. The registration
/// itself answers exactly as a new one would (so it tells nobody whether the email or the fiscal code is
/// registered); the one person who may know is told here.
enum RegistrationAttemptMail {
    enum Held { case email, fiscalCode, vatNumber }

    static func make(to email: String, held: Held, language: Language, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        switch language {
        case .en:
            let what =
                switch held {
                case .email: "with your email address"
                case .fiscalCode: "with your fiscal code"
                case .vatNumber: "with your company's VAT number"
                }
            return OutgoingMail(
                to: email, subject: "Someone tried to register with your details",
                body: """
                    Someone tried to register a Data4Help account \(what). Nothing was created, and your account is unchanged.

                    If it was you, you already have an account: sign in at
                    \(base)/login

                    If you forgot your password, choose a new one at
                    \(base)/password-reset

                    If it was not you, you need not do anything.
                    """)
        case .it:
            let what =
                switch held {
                case .email: "con il tuo indirizzo email"
                case .fiscalCode: "con il tuo codice fiscale"
                case .vatNumber: "con la partita IVA della tua azienda"
                }
            return OutgoingMail(
                to: email, subject: "Qualcuno ha provato a registrarsi con i tuoi dati",
                body: """
                    Qualcuno ha provato a registrare un account Data4Help \(what). Non è stato creato nulla e il tuo account non è cambiato.

                    Se eri tu, hai già un account: accedi da
                    \(base)/login

                    Se hai dimenticato la password, scegline una nuova da
                    \(base)/password-reset

                    Se non eri tu, non devi fare nulla.
                    """)
        }
    }
}
