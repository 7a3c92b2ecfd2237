import Foundation
import Logging
import PostgresNIO

/// The SQL of blocks.
package enum BlockStore {
    /// Locks the person's account row first (FOR NO KEY UPDATE, which uploads never wait for): a request being created for this person waits for
    /// the block to commit (and then sees it), and a request created just before is refused by the block.
    static func block(userID: UUID, thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Block? {
        _ = try await connection.query("SELECT 1 FROM accounts WHERE id = \(userID) FOR NO KEY UPDATE", logger: logger).collect()
        try await connection.query(
            """
            INSERT INTO blocks (user_id, third_party_id)
            SELECT \(userID), account_id FROM third_parties WHERE account_id = \(thirdPartyID)
            ON CONFLICT DO NOTHING
            """, logger: logger)
        return try await list(userID: userID, thirdPartyID: thirdPartyID, on: connection, logger: logger).first
    }

    /// True when a block was removed.
    static func unblock(userID: UUID, thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query(
            "DELETE FROM blocks WHERE user_id = \(userID) AND third_party_id = \(thirdPartyID) RETURNING 1", logger: logger
        ).collect().count == 1
    }

    /// The person's blocks, most recent first (or the one block of `thirdPartyID`).
    static func list(userID: UUID, thirdPartyID: UUID? = nil, on connection: PostgresConnection, logger: Logger) async throws -> [Block] {
        let rows = try await connection.query(
            """
            SELECT t.account_id, t.company_name, t.vat_number, b.blocked_at
            FROM blocks b JOIN third_parties t ON t.account_id = b.third_party_id
            WHERE b.user_id = \(userID) AND (\(thirdPartyID)::uuid IS NULL OR b.third_party_id = \(thirdPartyID))
            ORDER BY b.blocked_at DESC, t.account_id
            """, logger: logger)
        var blocks: [Block] = []
        for try await (id, name, vat, at) in rows.decode((UUID, String, String, Date).self) {
            blocks.append(Block(thirdParty: .init(id: id, companyName: name, vatNumber: vat), blockedAt: at))
        }
        return blocks
    }
}
