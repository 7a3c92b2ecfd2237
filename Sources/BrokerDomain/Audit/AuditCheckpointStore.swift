import Foundation
import Logging
import PostgresNIO

/// The signed checkpoints as stored for download. Their worth is their signature, not this table: a row
/// forged or edited here fails verification against the auditor's pinned key.
enum AuditCheckpointStore {
    static func insert(_ checkpoint: AuditCheckpoint, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO audit_checkpoints (log_size, head_hash, signed_at, key_id, signature)
            VALUES (\(checkpoint.logSize), \(checkpoint.headHash), \(checkpoint.signedAt), \(checkpoint.keyId), \(checkpoint.signature))
            """, logger: logger)
    }

    /// Newest first: up to `limit` checkpoints older than the one numbered `before`, each with its number.
    static func list(
        before: Int64?, limit: Int, keyID: String? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> [(id: Int64, checkpoint: AuditCheckpoint)] {
        let rows = try await connection.query(
            """
            SELECT id, log_size, head_hash, signed_at, key_id, signature FROM audit_checkpoints
            WHERE (\(before)::int8 IS NULL OR id < \(before)::int8) AND (\(keyID)::text IS NULL OR key_id = \(keyID)::text)
            ORDER BY id DESC LIMIT \(limit)
            """, logger: logger)
        return try await rows.collect().map { row in
            let (id, size, head, signedAt, keyID, signature) = try row.decode((Int64, Int64, String, String, String, String).self)
            return (id, AuditCheckpoint(logSize: size, headHash: head, signedAt: signedAt, keyId: keyID, signature: signature))
        }
    }
}
