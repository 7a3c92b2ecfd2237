import Foundation
import Logging
import PostgresNIO

/// Appends to the hash-chained audit log, always on the caller's transaction so a change never commits without its record.
public enum AuditLog {
    @discardableResult
    public static func append(_ event: AuditEvent, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let details = String(decoding: try JSONEncoder().encode(event.details), as: UTF8.self)
        let rows = try await connection.query(
            """
            SELECT append_audit_event(\(event.actorID), \(event.actorRole), \(event.action),
                                      \(event.requestID), \(event.subject), \(details)::jsonb)
            """, logger: logger)
        guard let sequence = try await rows.collect().first?.decode(Int64.self) else {
            throw AuditLogError.notAppended
        }
        return sequence
    }
}

enum AuditLogError: Error { case notAppended }
