import Foundation

/// The mail to an account's owner when someone registers with what it already holds. The registration
/// itself answers exactly as a new one would (so it tells nobody whether the email or the fiscal code is
/// registered); the one person who may know is told here.
enum RegistrationAttemptMail {
    enum Held { case email, fiscalCode, vatNumber }

    static func make(to email: String, held: Held, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let what =
            switch held {
            case .email: "with your email address"
            case .fiscalCode: "with your fiscal code"
            case .vatNumber: "with your company's VAT number"
            }
        let body = """
            Someone tried to register a Data4Help account \(what). Nothing was created, and your account is unchanged.

            If it was you, you already have an account: sign in at
            \(base)/login

            If it was not you, you need not do anything.
            """
        return OutgoingMail(to: email, subject: "Someone tried to register with your details", body: body)
    }
}
