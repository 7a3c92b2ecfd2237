import Foundation

/// The mail to a company when one of its API keys is made (issue 27): whoever knew the password could make
/// a key, so the owner hears of each one. It names the key, never its secret (nor the secret's prefix): the
/// secret is shown once, to whoever made it, and a mailbox is no place for it. The name is whoever made the
/// key's text: it is one line (validation refuses line breaks) and quoted, so it cannot pass for the mail's own.
enum APIKeyCreatedMail {
    static func make(to email: String, key: APIKeyStore.Key, publicURL: String) -> OutgoingMail {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let scope = key.scope == .readOnly ? "read only" : "full"
        let expiry = key.expiresAt.map { "until \(Timestamp.rfc3339($0))" } ?? "until it is revoked"
        let body = """
            A new API key was created for your Data4Help company account.

            Name: “\(key.name)”
            Scope: \(scope)
            Created: \(Timestamp.rfc3339(key.createdAt))
            Works: \(expiry)

            If you made it, you need not do anything.

            If you did not, someone else knows your password. Change it at
            \(base)/account/password
            which revokes every API key of the account (unless you choose to keep them), then create new keys
            for your own integrations. Your keys are listed at
            \(base)/company/settings
            """
        return OutgoingMail(to: email, subject: "A new API key for your Data4Help account", body: body)
    }
}
