import Foundation
import Logging
import PostgresNIO

/// Third parties' API keys; only the secret's hash is stored. A key stops working when it is revoked or its
/// expiry has passed; neither kind is listed.
package enum APIKeyStore {
    package struct Key: Sendable, Equatable {
        package var id: UUID
        package var name: String
        package var prefix: String
        package var scope: APIKeyScope
        package var createdAt: Date
        package var expiresAt: Date?
        package var lastUsedAt: Date?
    }

    static func create(
        accountID: UUID, name: String, scope: APIKeyScope, expiresAt: Date?, secret: SecretToken,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> Key {
        let prefix = String(secret.text.prefix(12))
        let rows = try await connection.query(
            """
            INSERT INTO api_keys (account_id, name, prefix, secret_hash, scope, expires_at)
            VALUES (\(accountID), \(name), \(prefix), \(secret.hash), \(scope.rawValue), \(expiresAt))
            RETURNING id, created_at
            """, logger: logger)
        guard let (id, createdAt) = try await rows.collect().first?.decode((UUID, Date).self) else {
            throw AccountStoreError.noRow
        }
        return Key(id: id, name: name, prefix: prefix, scope: scope, createdAt: createdAt, expiresAt: expiresAt, lastUsedAt: nil)
    }

    /// One page of live keys, newest first, after `cursor`.
    static func list(accountID: UUID, after cursor: PageKey?, limit: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> Page<Key>
    {
        // Exact microsecond text, not a Date bind (which truncates and would shift the keyset boundary).
        let cursorTime = cursor.map { Timestamp.postgresText($0.time) }
        let cursorID = cursor?.id ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let rows = try await connection.query(
            """
            SELECT id, name, prefix, scope, created_at, expires_at, last_used_at FROM api_keys
            WHERE account_id = \(accountID) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
              AND (\(cursorTime)::timestamptz IS NULL OR (created_at, id) < (\(cursorTime)::timestamptz, \(cursorID)))
            ORDER BY created_at DESC, id DESC
            LIMIT \(limit + 1)
            """, logger: logger)
        var keys: [Key] = []
        for try await (id, name, prefix, scope, createdAt, expiresAt, lastUsed)
            in rows.decode((UUID, String, String, String, Date, Date?, Date?).self)
        {
            keys.append(
                Key(
                    id: id, name: name, prefix: prefix, scope: APIKeyScope(rawValue: scope) ?? .readOnly, createdAt: createdAt,
                    expiresAt: expiresAt, lastUsedAt: lastUsed))
        }
        return Page(rows: keys, limit: limit) { PageKey(time: $0.createdAt, id: $0.id) }
    }

    /// Revokes the key if it belongs to the account; false when there is no such live key of theirs.
    static func revoke(id: UUID, accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            UPDATE api_keys SET revoked_at = now()
            WHERE id = \(id) AND account_id = \(accountID) AND revoked_at IS NULL
            RETURNING id
            """, logger: logger)
        return try await !rows.collect().isEmpty
    }

    /// Revokes every live key of the account; returns their ids.
    static func revokeAll(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [UUID] {
        let rows = try await connection.query(
            """
            UPDATE api_keys SET revoked_at = now()
            WHERE account_id = \(accountID) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
            RETURNING id
            """, logger: logger)
        return try await rows.collect().map { try $0.decode(UUID.self) }
    }

    /// How stale a key's `last_used_at` may get before a use stamps it again: one write a minute per key at
    /// most, not one per request (a busy integration's every call would otherwise rewrite its row).
    static let lastUseResolution = 60

    /// The caller behind a live key of an active account. Stamps the key's last use with `now` (the
    /// service's clock) when the stamp is older than `lastUseResolution`, in the same statement.
    package static func principal(for secret: SecretToken, now: Date, on connection: PostgresConnection, logger: Logger) async throws
        -> Principal?
    {
        let rows = try await connection.query(
            """
            WITH found AS (
                SELECT k.id, k.account_id, a.role, k.scope, k.last_used_at
                FROM api_keys k JOIN accounts a ON a.id = k.account_id
                WHERE k.secret_hash = \(secret.hash) AND k.revoked_at IS NULL
                  AND (k.expires_at IS NULL OR k.expires_at > now())
                  AND a.status = 'active'
            ), stamped AS (
                UPDATE api_keys k SET last_used_at = \(now)
                FROM found f
                WHERE k.id = f.id
                  AND (f.last_used_at IS NULL OR f.last_used_at < \(now)::timestamptz - make_interval(secs => \(lastUseResolution)))
                RETURNING k.id
            )
            SELECT id, account_id, role, scope FROM found
            """, logger: logger)
        for try await (id, accountID, role, scope) in rows.decode((UUID, UUID, String, String).self) {
            guard let role = Role(rawValue: role) else { return nil }
            // An unknown scope (a newer server's) is read as the narrowest.
            return Principal(accountID: accountID, role: role, credential: .apiKey(id: id, scope: APIKeyScope(rawValue: scope) ?? .readOnly))
        }
        return nil
    }
}
