import Foundation
import Logging
import PostgresNIO

/// Writes mails into the outbox, always on the caller's connection and so inside the transaction of the
/// event that causes them: a mail exists if and only if its event committed, and nobody waits for a mail
/// program (`MailDelivery` sends them). Notifications are checked against their recipient's opt-outs and
/// written in their language, with a one-click unsubscribe link.
package struct MailOutbox: Sendable {
    let client: DatabasePool
    /// `PUBLIC_URL` without a trailing slash: the links mails carry start with it.
    package let publicURL: String
    let unsubscribeKey: ServerSecret

    /// The console page where an account chooses its notifications (named in every notification).
    package var settingsURL: String { "\(publicURL)/account/notifications" }

    package init(client: DatabasePool, publicURL: String) {
        self.client = client
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.unsubscribeKey = ServerSecret("mail_unsubscribe_key", client: client)
    }

    /// A mail to an address that always goes out (an account's own security: activation, reset, a changed
    /// password, a new API key, someone registering with its details).
    package func enqueue(_ mail: OutgoingMail, kind: MailKind, accountID: UUID?, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await MailOutboxStore.insert(mail, kind: kind, accountID: accountID, dedupeKey: nil, on: connection, logger: logger)
    }

    /// A notification to an active account, unless it turned `kind` off; with `dedupeKey`, at most one such
    /// mail is ever written. `make` writes the mail for the recipient (its language, its time zone, its
    /// unsubscribe link). True when a mail was written.
    @discardableResult
    package func notify(
        accountID: UUID, kind: MailKind, dedupeKey: String? = nil, on connection: PostgresConnection, logger: Logger,
        make: (MailRecipient) -> OutgoingMail
    ) async throws -> Bool {
        guard let account = try await MailOutboxStore.recipient(accountID: accountID, kind: kind, on: connection, logger: logger),
            account.active, !account.optedOut
        else { return false }
        let recipient = MailRecipient(
            email: account.email, language: account.language, timeZone: account.timeZone.flatMap(TimeZone.init(identifier:)),
            unsubscribeURL: try await unsubscribeURL(accountID: accountID, kind: kind, on: connection, logger: logger))
        var mail = make(recipient)
        mail.to = account.email
        mail.listUnsubscribe = recipient.unsubscribeURL
        return try await MailOutboxStore.insert(mail, kind: kind, accountID: accountID, dedupeKey: dedupeKey, on: connection, logger: logger)
    }

    /// The one-click unsubscribe URL of `kind` for `accountID`.
    func unsubscribeURL(accountID: UUID, kind: MailKind, on connection: PostgresConnection, logger: Logger) async throws -> String {
        let token = UnsubscribeLink(accountID: accountID, kind: kind).token(key: try await unsubscribeKey.key(on: connection, logger: logger))
        return "\(publicURL)/unsubscribe/\(token)"
    }

    /// Notifications of one kind to many accounts whose settings the caller read (the weekly digest): one
    /// statement, each at most once by its key.
    func notifyMany(
        _ mails: [(mail: OutgoingMail, accountID: UUID, dedupeKey: String)], kind: MailKind, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await MailOutboxStore.insertMany(mails, kind: kind, on: connection, logger: logger)
    }

    /// Whether a mail with `dedupeKey` was ever written.
    func exists(dedupeKey: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await MailOutboxStore.exists(dedupeKey: dedupeKey, on: connection, logger: logger)
    }

    /// The language `accountID` is written to in.
    package func language(of accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Language {
        try await MailOutboxStore.language(accountID: accountID, on: connection, logger: logger)
    }

    /// The pending mails to `email`, taken out of the outbox (tools that register their own accounts).
    package func withdraw(to email: String, logger: Logger) async throws -> [OutgoingMail] {
        try await client.withConnection { try await MailOutboxStore.withdraw(recipient: email, on: $0, logger: logger) }
    }

    // MARK: Preferences

    /// The notifications `accountID` receives, each on or off.
    package func preferences(accountID: UUID, role: Role, logger: Logger) async throws -> [(kind: MailKind, on: Bool)] {
        let off = try await client.withConnection { try await MailOutboxStore.optOuts(accountID: accountID, on: $0, logger: logger) }
        return MailKind.notifications(for: role).map { ($0, !off.contains($0.rawValue)) }
    }

    /// Turns notifications on or off; kinds the role does not receive are refused.
    package func setPreferences(accountID: UUID, role: Role, _ changes: [MailKind: Bool], logger: Logger) async throws {
        let allowed = MailKind.notifications(for: role)
        let refused = changes.keys.filter { !allowed.contains($0) }.map(\.rawValue).sorted()
        guard refused.isEmpty else {
            throw MailPreferenceError.notReceived(refused)
        }
        try await client.withTransaction(logger: logger) { connection in
            for (kind, on) in changes {
                try await MailOutboxStore.setOptOut(accountID: accountID, kind: kind, optedOut: !on, on: connection, logger: logger)
            }
        }
    }

    /// What a one-click unsubscribe token stands for, or nil (forged, or altered).
    package func link(forToken token: String, logger: Logger) async throws -> UnsubscribeLink? {
        UnsubscribeLink.parse(token, key: try await unsubscribeKey.key(logger: logger))
    }

    /// Turns off what a valid token names, and nothing for an invalid one (nil). Saying so tells nothing: a
    /// token names its account itself, and only its HMAC, which nobody can make without the key, is checked.
    package func unsubscribe(token: String, logger: Logger) async throws -> UnsubscribeLink? {
        guard let link = try await link(forToken: token, logger: logger) else { return nil }
        try await client.withTransaction(logger: logger) {
            try await MailOutboxStore.setOptOut(accountID: link.accountID, kind: link.kind, optedOut: true, on: $0, logger: logger)
        }
        logger.info("notification turned off by its mail's link", metadata: ["mail.kind": "\(link.kind.rawValue)"])
        return link
    }

    /// Forgets sent and dead mails older than `days` (their bodies went when they were sent). Mails with a key
    /// stay, since the key is what keeps them from being written twice (a grant's first download), except
    /// the weekly digest's, which its week's row already keeps from being written again.
    package func pruneSent(olderThanDays days: Int = 30, logger: Logger) async throws {
        try await client.withConnection { try await MailOutboxStore.prune(olderThanDays: days, on: $0, logger: logger) }
    }

    /// Mails by status (`pending`, `sent`, `dead`), the same on every instance.
    package func counts(messageIDs: [UUID]? = nil, logger: Logger) async throws -> [String: Int] {
        try await client.withConnection { try await MailOutboxStore.counts(messageIDs: messageIDs, on: $0, logger: logger) }
    }
}
