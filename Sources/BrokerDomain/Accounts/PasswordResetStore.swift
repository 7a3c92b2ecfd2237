import Foundation
import Logging
import PostgresNIO

/// The SQL of password reset tokens. Times come from the caller (the server's `WallClock`).
enum PasswordResetStore {
    /// Retires the live tokens of the activated account with `email`, then issues `token` to it; returns
    /// the account's id and language, or nil when `email` names no activated account. The same two
    /// statements run whether or not it does (they then change no row): the request's work does not depend
    /// on what the email names, so neither does its time.
    static func issue(
        _ token: SecretToken, email: String, now: Date, validFor seconds: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> (accountID: UUID, language: Language)? {
        // A transaction that writes nothing commits without waiting for the WAL to reach the disk; one that
        // inserts a token and a mail does. Taking a transaction id makes every path's commit write and flush
        // its record, so an unknown address is not answered a flush faster than a known one.
        try await connection.query("SELECT pg_current_xact_id()", logger: logger)
        try await connection.query(
            """
            UPDATE password_reset_tokens SET used_at = \(now)
            WHERE used_at IS NULL AND account_id IN (SELECT id FROM accounts WHERE email = \(email))
            """, logger: logger)
        let expiresAt = now.addingTimeInterval(Double(seconds))
        let rows = try await connection.query(
            """
            WITH owner AS (
                SELECT id, language FROM accounts WHERE email = \(email) AND status = 'active' AND password_hash IS NOT NULL
            ), issued AS (
                INSERT INTO password_reset_tokens (token_hash, account_id, created_at, expires_at)
                SELECT \(token.hash), id, \(now), \(expiresAt) FROM owner
                RETURNING account_id
            )
            SELECT owner.id, owner.language FROM owner JOIN issued ON issued.account_id = owner.id
            """, logger: logger)
        for try await (id, language) in rows.decode((UUID, String).self) { return (id, Language(rawValue: language) ?? .en) }
        return nil
    }

    /// For an address with no activated account: the round trip the mail's insert costs the other path.
    static func balanceUnknown(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT count(*) FROM mail_outbox WHERE false", logger: logger)
    }

    /// A token's state, as its holder may learn it.
    struct TokenRecord: Sendable {
        var accountID: UUID
        var email: String
        var expired: Bool
        var used: Bool
    }

    /// The token with this hash and its account; `lock` holds the token's row for the rest of the
    /// transaction, so that two resets with one token cannot both use it.
    static func token(hash: Data, now: Date, lock: Bool = false, on connection: PostgresConnection, logger: Logger) async throws
        -> TokenRecord?
    {
        let rows =
            lock
            ? try await connection.query(
                """
                SELECT t.account_id, a.email, t.expires_at <= \(now), t.used_at IS NOT NULL
                FROM password_reset_tokens t JOIN accounts a ON a.id = t.account_id
                WHERE t.token_hash = \(hash) AND a.status = 'active'
                FOR UPDATE OF t
                """, logger: logger)
            : try await connection.query(
                """
                SELECT t.account_id, a.email, t.expires_at <= \(now), t.used_at IS NOT NULL
                FROM password_reset_tokens t JOIN accounts a ON a.id = t.account_id
                WHERE t.token_hash = \(hash) AND a.status = 'active'
                """, logger: logger)
        for try await (id, email, expired, used) in rows.decode((UUID, String, Bool, Bool).self) {
            return TokenRecord(accountID: id, email: email, expired: expired, used: used)
        }
        return nil
    }

    /// Uses up every token of the account (the one just used, and any other still live).
    static func useAll(accountID: UUID, now: Date, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE password_reset_tokens SET used_at = \(now) WHERE account_id = \(accountID) AND used_at IS NULL", logger: logger)
    }

    /// Forgets tokens expired for more than a day (the background housekeeping); returns how many.
    static func forgetExpired(before cutoff: Date, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            "DELETE FROM password_reset_tokens WHERE expires_at < \(cutoff) RETURNING 1", logger: logger)
        return try await rows.collect().count
    }
}
