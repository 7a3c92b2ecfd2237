import Foundation

/// The mail to a company when one of its API keys is made (issue 27): whoever knew the password could make
/// a key, so the owner hears of each one. It names the key, never its secret (nor the secret's prefix): the
/// secret is shown once, to whoever made it, and a mailbox is no place for it. The name is whoever made the
/// key's text: it is one line (validation refuses line breaks) and quoted, so it cannot pass for the mail's own.
enum APIKeyCreatedMail {
    static func make(to email: String, key: APIKeyStore.Key, language: Language, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let created = MailDates.dateTime(key.createdAt, language, nil)
        switch language {
        case .en:
            let scope = key.scope == .readOnly ? "read only" : "full"
            let expiry = key.expiresAt.map { "until \(MailDates.dateTime($0, language, nil))" } ?? "until it is revoked"
            return OutgoingMail(
                to: email, subject: "A new API key for your Data4Help account",
                body: """
                    A new API key was created for your Data4Help company account.

                    Name: “\(key.name)”
                    Scope: \(scope)
                    Created: \(created)
                    Works: \(expiry)

                    If you made it, you need not do anything.

                    If you did not, someone else knows your password. Change it at
                    \(base)/account/password
                    which revokes every API key of the account (unless you choose to keep them), then create new keys
                    for your own integrations. Your keys are listed at
                    \(base)/company/settings
                    """)
        case .it:
            let scope = key.scope == .readOnly ? "sola lettura" : "completo"
            let expiry = key.expiresAt.map { "fino al \(MailDates.dateTime($0, language, nil))" } ?? "finché non viene revocata"
            return OutgoingMail(
                to: email, subject: "Una nuova chiave API per il vostro account Data4Help",
                body: """
                    È stata creata una nuova chiave API per l'account aziendale Data4Help.

                    Nome: “\(key.name)”
                    Accesso: \(scope)
                    Creata: \(created)
                    Valida: \(expiry)

                    Se l'avete creata voi, non dovete fare nulla.

                    Altrimenti qualcun altro conosce la vostra password. Cambiatela da
                    \(base)/account/password
                    (il cambio revoca tutte le chiavi API dell'account, a meno che scegliate di mantenerle), poi create
                    nuove chiavi per le vostre integrazioni. Le chiavi sono elencate in
                    \(base)/company/settings
                    """)
        }
    }
}
