import Foundation
import Logging
import PostgresNIO

/// The SQL of the second factor: `second_factors` (the key and the last accepted step), `recovery_codes`
/// and `second_factor_challenges` (the sign-in between its two steps).
enum SecondFactorStore {
    struct Row: Sendable {
        var secret: Data?
        var pendingSecret: Data?
        var confirmedAt: Date?
    }

    /// The account's factor, confirmed or pending; nil when it never started enrolling (or turned it off).
    static func factor(accountID: UUID, lock: Bool = false, on connection: PostgresConnection, logger: Logger) async throws -> Row? {
        let rows = try await connection.query(
            """
            SELECT secret, pending_secret, confirmed_at FROM second_factors WHERE account_id = \(accountID)
            \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger)
        for try await (secret, pending, confirmedAt) in rows.decode((Data?, Data?, Date?).self) {
            return Row(secret: secret, pendingSecret: pending, confirmedAt: confirmedAt)
        }
        return nil
    }

    /// Starts (or restarts) an enrolment: the pending key is replaced, a confirmed one stays in force.
    static func startEnrolment(accountID: UUID, pendingSecret: Data, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO second_factors (account_id, pending_secret) VALUES (\(accountID), \(pendingSecret))
            ON CONFLICT (account_id) DO UPDATE SET pending_secret = EXCLUDED.pending_secret
            """, logger: logger)
    }

    /// The pending key becomes the factor, with `step` (its first code's) as the last accepted one, so the
    /// code that confirmed it cannot also sign in. True when `pendingSecret` was still the pending key.
    static func confirm(accountID: UUID, pendingSecret: Data, step: Int64, on connection: PostgresConnection, logger: Logger) async throws
        -> Bool
    {
        let rows = try await connection.query(
            """
            UPDATE second_factors SET secret = pending_secret, pending_secret = NULL, confirmed_at = now(),
                last_step = greatest(last_step, \(step))
            WHERE account_id = \(accountID) AND pending_secret = \(pendingSecret)
            RETURNING 1
            """, logger: logger)
        return try await !rows.collect().isEmpty
    }

    /// Accepts the code of `step` for the key `secret`: only if that key is still the account's factor and no
    /// code of this or a later step was accepted before. One conditional statement: of two requests with
    /// the same code, the second waits for the first's row lock and then finds the step taken.
    static func acceptStep(accountID: UUID, secret: Data, step: Int64, on connection: PostgresConnection, logger: Logger) async throws
        -> Bool
    {
        let rows = try await connection.query(
            """
            UPDATE second_factors SET last_step = \(step)
            WHERE account_id = \(accountID) AND secret = \(secret) AND last_step < \(step)
            RETURNING 1
            """, logger: logger)
        return try await !rows.collect().isEmpty
    }

    /// The account's recovery codes become `hashes`, all unused.
    static func replaceRecoveryCodes(accountID: UUID, hashes: [Data], on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM recovery_codes WHERE account_id = \(accountID)", logger: logger)
        for hash in hashes {
            try await connection.query(
                "INSERT INTO recovery_codes (account_id, code_hash) VALUES (\(accountID), \(hash))", logger: logger)
        }
    }

    /// Uses the recovery code with `hash`: true once, false for an unknown or used one.
    static func useRecoveryCode(accountID: UUID, hash: Data, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            UPDATE recovery_codes SET used_at = now()
            WHERE account_id = \(accountID) AND code_hash = \(hash) AND used_at IS NULL
            RETURNING 1
            """, logger: logger)
        return try await !rows.collect().isEmpty
    }

    static func unusedRecoveryCodes(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            "SELECT count(*)::int8 FROM recovery_codes WHERE account_id = \(accountID) AND used_at IS NULL", logger: logger)
        return Int(try await rows.collect().first?.decode(Int64.self) ?? 0)
    }

    /// Turns the factor off: the key, any pending one and the recovery codes go. True when there was one.
    static func delete(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query("DELETE FROM recovery_codes WHERE account_id = \(accountID)", logger: logger)
        let rows = try await connection.query(
            "DELETE FROM second_factors WHERE account_id = \(accountID) AND secret IS NOT NULL RETURNING 1", logger: logger)
        return try await !rows.collect().isEmpty
    }

    // MARK: Sign-in challenges

    /// A challenge for the account, valid `ttlSeconds`, tied to the password hash the password matched.
    static func createChallenge(
        accountID: UUID, passwordHash: String, ttlSeconds: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> (SecretToken, Date) {
        let token = SecretToken.generate(.secondFactorChallenge)
        let rows = try await connection.query(
            """
            INSERT INTO second_factor_challenges (token_hash, account_id, password_hash, expires_at)
            VALUES (\(token.hash), \(accountID), \(passwordHash), now() + make_interval(secs => \(ttlSeconds)))
            RETURNING expires_at
            """, logger: logger)
        guard let expiresAt = try await rows.collect().first?.decode(Date.self) else { throw AccountStoreError.noRow }
        return (token, expiresAt)
    }

    /// The account of a live (unused, unexpired) challenge; with `lock`, held until the transaction ends, so
    /// that it gives one session at most.
    static func challenge(tokenHash: Data, lock: Bool, on connection: PostgresConnection, logger: Logger) async throws
        -> (accountID: UUID, passwordHash: String)?
    {
        let rows = try await connection.query(
            """
            SELECT account_id, password_hash FROM second_factor_challenges
            WHERE token_hash = \(tokenHash) AND used_at IS NULL AND expires_at > now()
            \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger)
        for try await (id, hash) in rows.decode((UUID, String).self) { return (id, hash) }
        return nil
    }

    static func useChallenge(tokenHash: Data, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE second_factor_challenges SET used_at = now() WHERE token_hash = \(tokenHash)", logger: logger)
    }

    /// Deletes challenges expired for a while (the housekeeping); returns how many.
    static func forgetExpiredChallenges(on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            """
            WITH gone AS (DELETE FROM second_factor_challenges WHERE expires_at < now() - interval '1 hour' RETURNING 1)
            SELECT count(*)::int8 FROM gone
            """, logger: logger)
        return Int(try await rows.collect().first?.decode(Int64.self) ?? 0)
    }
}
