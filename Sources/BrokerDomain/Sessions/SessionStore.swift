import Foundation
import Logging
import PostgresNIO

/// Session rows: created at login, looked up on every request, revoked at logout or password change.
package enum SessionStore {
    package static func create(accountID: UUID, ttlSeconds: Int, on connection: PostgresConnection, logger: Logger) async throws -> (
        SecretToken, Date
    ) {
        let token = SecretToken.generate(.session)
        let rows = try await connection.query(
            """
            INSERT INTO sessions (token_hash, account_id, expires_at)
            VALUES (\(token.hash), \(accountID), now() + make_interval(secs => \(ttlSeconds)))
            RETURNING expires_at
            """, logger: logger)
        guard let expiresAt = try await rows.collect().first?.decode(Date.self) else { throw AccountStoreError.noRow }
        return (token, expiresAt)
    }

    /// The caller behind a live session token; nil when unknown, expired, revoked, or the account is not active.
    package static func principal(for token: SecretToken, on connection: PostgresConnection, logger: Logger) async throws -> Principal? {
        let hash = token.hash
        for (id, role, mustEnrol) in try await connection.preparedRows(LivePrincipal(tokenHash: hash), logger: logger) {
            guard let role = Role(rawValue: role) else { return nil }
            var principal = Principal(accountID: id, role: role, credential: .session(tokenHash: hash))
            principal.mustEnrolSecondFactor = mustEnrol
            return principal
        }
        return nil
    }

    /// `principal`'s statement, prepared once per connection: every request made with a session runs it, and
    /// planning it afresh each time was a tenth of the machine under 32 phones uploading.
    struct LivePrincipal: PostgresPreparedStatement {
        static let name = "d4h_session_principal"
        static let sql = """
            SELECT a.id, a.role,
                   a.role = 'auditor' AND NOT EXISTS (
                       SELECT 1 FROM second_factors f WHERE f.account_id = a.id AND f.secret IS NOT NULL)
            FROM sessions s JOIN accounts a ON a.id = s.account_id
            WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND a.status = 'active'
            """
        typealias Row = (UUID, String, Bool)
        var tokenHash: Data

        func makeBindings() throws -> PostgresBindings {
            var binds = PostgresBindings()
            try binds.append(tokenHash)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Whether the account's session is still live (not revoked nor expired), read in the caller's transaction.
    static func isLive(tokenHash: Data, accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            SELECT 1 FROM sessions
            WHERE token_hash = \(tokenHash) AND account_id = \(accountID) AND revoked_at IS NULL AND expires_at > now()
            """, logger: logger)
        return try await !rows.collect().isEmpty
    }

    package static func revoke(tokenHash: Data, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE sessions SET revoked_at = now() WHERE token_hash = \(tokenHash) AND revoked_at IS NULL",
            logger: logger)
    }

    /// Revokes every live session of the account except `keeping` (the one that changed the password).
    static func revokeAll(
        accountID: UUID, keeping tokenHash: Data?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE sessions SET revoked_at = now()
            WHERE account_id = \(accountID) AND revoked_at IS NULL
              AND (\(tokenHash)::bytea IS NULL OR token_hash <> \(tokenHash))
            """, logger: logger)
    }
}
