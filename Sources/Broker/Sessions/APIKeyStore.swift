import Foundation
import Logging
import PostgresNIO

/// Long-lived third-party API keys; only the secret's hash is stored.
public struct APIKeyStore: Sendable {
    public let client: DatabasePool

    public init(client: DatabasePool) { self.client = client }

    public struct Key: Sendable, Equatable {
        public var id: UUID
        public var name: String
        public var prefix: String
        public var createdAt: Date
        public var lastUsedAt: Date?
    }

    static func create(
        accountID: UUID, name: String, secret: SecretToken, on connection: PostgresConnection, logger: Logger
    ) async throws -> Key {
        let prefix = String(secret.text.prefix(12))
        let rows = try await connection.query(
            """
            INSERT INTO api_keys (account_id, name, prefix, secret_hash)
            VALUES (\(accountID), \(name), \(prefix), \(secret.hash))
            RETURNING id, created_at
            """, logger: logger)
        guard let (id, createdAt) = try await rows.collect().first?.decode((UUID, Date).self) else {
            throw AccountStoreError.noRow
        }
        return Key(id: id, name: name, prefix: prefix, createdAt: createdAt, lastUsedAt: nil)
    }

    /// One page of live keys, newest first, after `cursor`.
    public func list(accountID: UUID, after cursor: PageCursor?, limit: Int, logger: Logger) async throws -> Page<Key> {
        // Exact microsecond text, not a Date bind (which truncates and would shift the keyset boundary).
        let cursorTime = cursor.map { Timestamp.postgresText($0.time) }
        let cursorID = cursor?.id ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let rows = try await client.query(
            """
            SELECT id, name, prefix, created_at, last_used_at FROM api_keys
            WHERE account_id = \(accountID) AND revoked_at IS NULL
              AND (\(cursorTime)::timestamptz IS NULL OR (created_at, id) < (\(cursorTime)::timestamptz, \(cursorID)))
            ORDER BY created_at DESC, id DESC
            LIMIT \(limit + 1)
            """, logger: logger)
        var keys: [Key] = []
        for try await (id, name, prefix, createdAt, lastUsed) in rows.decode((UUID, String, String, Date, Date?).self) {
            keys.append(Key(id: id, name: name, prefix: prefix, createdAt: createdAt, lastUsedAt: lastUsed))
        }
        return Page(rows: keys, limit: limit) { PageCursor(time: $0.createdAt, id: $0.id) }
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

    public func principal(for secret: SecretToken, logger: Logger) async throws -> Principal? {
        let rows = try await client.query(
            """
            WITH used AS (
                UPDATE api_keys k SET last_used_at = now()
                FROM accounts a
                WHERE k.secret_hash = \(secret.hash) AND k.revoked_at IS NULL
                  AND a.id = k.account_id AND a.status = 'active'
                RETURNING k.id, a.id AS account_id, a.role
            )
            SELECT id, account_id, role FROM used
            """, logger: logger)
        for try await (id, accountID, role) in rows.decode((UUID, UUID, String).self) {
            guard let role = Role(rawValue: role) else { return nil }
            return Principal(accountID: accountID, role: role, credential: .apiKey(id: id))
        }
        return nil
    }
}
