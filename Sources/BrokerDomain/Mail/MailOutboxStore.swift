import Foundation
import Logging
import PostgresNIO

/// The `mail_outbox` table: mails written in their event's transaction, claimed and recorded by the
/// delivery loop, and the opt-outs and recipients notifications are checked against. Leases and retry
/// times are the database's own clock (`now()`), like the webhook outbox's, so instances on different
/// hosts agree on them.
enum MailOutboxStore {
    /// A mail leased for one attempt.
    struct Claimed: Sendable {
        var id: Int64
        var kind: String
        var mail: OutgoingMail
        /// This attempt's number (1-based).
        var attempt: Int
    }

    /// Who a notification goes to, as the account says now.
    struct Recipient: Sendable {
        var email: String
        var role: Role
        var language: Language
        var timeZone: String?
        var optedOut: Bool
        var active: Bool
    }

    static func insert(
        _ mail: OutgoingMail, kind: MailKind, accountID: UUID?, dedupeKey: String?, on connection: PostgresConnection, logger: Logger
    ) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO mail_outbox (message_id, kind, account_id, recipient, subject, body, list_unsubscribe, dedupe_key,
                                     next_attempt_at, created_at)
            VALUES (\(mail.messageID), \(kind.rawValue), \(accountID), \(mail.to), \(mail.subject), \(mail.body),
                    \(mail.listUnsubscribe), \(dedupeKey), now(), now())
            ON CONFLICT (dedupe_key) DO NOTHING
            RETURNING id
            """, logger: logger)
        return try await rows.collect().count == 1
    }

    /// Many notifications of one kind in one statement (the weekly digest): each with its account and key.
    static func insertMany(
        _ mails: [(mail: OutgoingMail, accountID: UUID, dedupeKey: String)], kind: MailKind, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !mails.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO mail_outbox (message_id, kind, account_id, recipient, subject, body, list_unsubscribe, dedupe_key,
                                     next_attempt_at, created_at)
            SELECT m.message_id, \(kind.rawValue), m.account_id, m.recipient, m.subject, m.body, m.list_unsubscribe, m.dedupe_key, now(), now()
            FROM unnest(\(mails.map(\.mail.messageID))::uuid[], \(mails.map(\.accountID))::uuid[], \(mails.map(\.mail.to))::text[],
                        \(mails.map(\.mail.subject))::text[], \(mails.map(\.mail.body))::text[],
                        \(mails.map { $0.mail.listUnsubscribe ?? "" })::text[], \(mails.map(\.dedupeKey))::text[])
                 AS m (message_id, account_id, recipient, subject, body, list_unsubscribe, dedupe_key)
            ON CONFLICT (dedupe_key) DO NOTHING
            """, logger: logger)
    }

    /// Whether a mail with `dedupeKey` was already written (sent or not).
    static func exists(dedupeKey: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("SELECT 1 FROM mail_outbox WHERE dedupe_key = \(dedupeKey)", logger: logger)
        return try await rows.collect().count == 1
    }

    static func recipient(accountID: UUID, kind: MailKind, on connection: PostgresConnection, logger: Logger) async throws -> Recipient? {
        let rows = try await connection.query(
            """
            SELECT a.email, a.role, a.language, u.time_zone, a.status = 'active',
                   EXISTS (SELECT 1 FROM mail_opt_outs o WHERE o.account_id = a.id AND o.kind = \(kind.rawValue))
            FROM accounts a LEFT JOIN users u ON u.account_id = a.id
            WHERE a.id = \(accountID)
            """, logger: logger)
        for try await (email, role, language, zone, active, optedOut) in rows.decode((String, String, String, String?, Bool, Bool).self) {
            // The columns' CHECKs allow no other values.
            guard let role = Role(rawValue: role), let language = Language(rawValue: language) else { return nil }
            return Recipient(email: email, role: role, language: language, timeZone: zone, optedOut: optedOut, active: active)
        }
        return nil
    }

    /// The language an account is written to in (English for no such account).
    static func language(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Language {
        let rows = try await connection.query("SELECT language FROM accounts WHERE id = \(accountID)", logger: logger)
        for try await text in rows.decode(String.self) { return Language(rawValue: text) ?? .en }
        return .en
    }

    /// Takes the pending mails to `recipient` out of the outbox: for tools that register accounts of their
    /// own (the demo seed, benchmarks) and read the activation token instead of mailing it.
    static func withdraw(recipient: String, on connection: PostgresConnection, logger: Logger) async throws -> [OutgoingMail] {
        let rows = try await connection.query(
            """
            DELETE FROM mail_outbox WHERE recipient = \(recipient) AND status = 'pending'
            RETURNING id, message_id, subject, coalesce(body, '')
            """, logger: logger)
        var mails: [(Int64, OutgoingMail)] = []
        for try await (id, messageID, subject, body) in rows.decode((Int64, UUID, String, String).self) {
            mails.append((id, OutgoingMail(to: recipient, subject: subject, body: body, messageID: messageID)))
        }
        return mails.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Claims up to `limit` due mails and leases them for `lease`; `attempts` counts the claim, so a mail
    /// whose sender crashed mid-attempt still moves towards the dead letters.
    static func claim(limit: Int, maxAttempts: Int, lease: Duration, on connection: PostgresConnection, logger: Logger) async throws
        -> [Claimed]
    {
        let rows = try await connection.query(
            """
            WITH due AS (
                SELECT id FROM mail_outbox
                WHERE status = 'pending' AND next_attempt_at <= now() AND attempts < \(maxAttempts)
                ORDER BY next_attempt_at, id
                LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
            )
            UPDATE mail_outbox m
            SET attempts = m.attempts + 1, next_attempt_at = now() + make_interval(secs => \(lease.inSeconds))
            FROM due WHERE m.id = due.id
            RETURNING m.id, m.kind, m.message_id, m.recipient, m.subject, coalesce(m.body, ''), m.list_unsubscribe, m.attempts
            """, logger: logger)
        var claimed: [Claimed] = []
        for try await (id, kind, messageID, recipient, subject, body, unsubscribe, attempts)
            in rows.decode((Int64, String, UUID, String, String, String, String?, Int32).self)
        {
            let mail = OutgoingMail(to: recipient, subject: subject, body: body, messageID: messageID, listUnsubscribe: unsubscribe)
            claimed.append(Claimed(id: id, kind: kind, mail: mail, attempt: Int(attempts)))
        }
        return claimed
    }

    /// Mails whose claims used every attempt and were never recorded (their sender died each time) are dead.
    static func buryExhausted(maxAttempts: Int, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE mail_outbox SET status = 'dead', body = NULL, last_error = coalesce(last_error, 'no attempt was recorded')
            WHERE status = 'pending' AND attempts >= \(maxAttempts) AND next_attempt_at <= now()
            """, logger: logger)
    }

    /// The mail went out: its body (which may hold a token) is dropped. Only this attempt's record counts:
    /// one that comes after the lease ended, when another instance claimed the mail again, changes nothing.
    static func markSent(id: Int64, attempt: Int, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE mail_outbox SET status = 'sent', sent_at = now(), body = NULL, leased_until = NULL, last_error = NULL
            WHERE id = \(id) AND attempts = \(attempt) AND status = 'pending'
            """, logger: logger)
    }

    /// The attempt failed: try again after `retryDelay`, or give up (`dead`) when `dead` says so.
    static func markFailed(
        id: Int64, attempt: Int, error: String, retryDelay: Duration, dead: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws {
        if dead {
            try await connection.query(
                """
                UPDATE mail_outbox SET status = 'dead', body = NULL, last_error = \(error)
                WHERE id = \(id) AND attempts = \(attempt) AND status = 'pending'
                """, logger: logger)
        } else {
            try await connection.query(
                """
                UPDATE mail_outbox SET last_error = \(error), next_attempt_at = now() + make_interval(secs => \(retryDelay.inSeconds))
                WHERE id = \(id) AND attempts = \(attempt) AND status = 'pending'
                """, logger: logger)
        }
    }

    /// Mails by status, for `/metrics`.
    /// Mails by status: all of them, or those of `messageIDs`.
    static func counts(messageIDs: [UUID]? = nil, on connection: PostgresConnection, logger: Logger) async throws -> [String: Int] {
        let rows = try await connection.query(
            """
            SELECT status, count(*) FROM mail_outbox
            WHERE \(messageIDs == nil) OR message_id = ANY(\(messageIDs ?? [])::uuid[])
            GROUP BY status
            """, logger: logger)
        var counts: [String: Int] = ["pending": 0, "sent": 0, "dead": 0]
        for try await (status, count) in rows.decode((String, Int64).self) { counts[status] = Int(count) }
        return counts
    }

    /// Sent and dead mails older than `days` are forgotten (their bodies already are).
    static func prune(olderThanDays days: Int, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            DELETE FROM mail_outbox
            WHERE status <> 'pending' AND created_at < now() - make_interval(days => \(days)::int)
              AND (dedupe_key IS NULL OR kind = 'weekly_digest')
            """,
            logger: logger)
    }

    // MARK: Opt-outs

    static func optOuts(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        let rows = try await connection.query("SELECT kind FROM mail_opt_outs WHERE account_id = \(accountID)", logger: logger)
        var kinds: Set<String> = []
        for try await kind in rows.decode(String.self) { kinds.insert(kind) }
        return kinds
    }

    static func setOptOut(accountID: UUID, kind: MailKind, optedOut: Bool, on connection: PostgresConnection, logger: Logger) async throws {
        if optedOut {
            try await connection.query(
                "INSERT INTO mail_opt_outs (account_id, kind) VALUES (\(accountID), \(kind.rawValue)) ON CONFLICT DO NOTHING", logger: logger)
        } else {
            try await connection.query(
                "DELETE FROM mail_opt_outs WHERE account_id = \(accountID) AND kind = \(kind.rawValue)", logger: logger)
        }
    }
}
