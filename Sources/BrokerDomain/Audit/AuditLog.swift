import Foundation
import Logging
import PostgresNIO

/// Appends to the hash-chained audit log, always on the caller's transaction so a change never commits without its record.
package enum AuditLog {
    @discardableResult
    package static func append(_ event: AuditEvent, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let details = String(decoding: try JSONEncoder().encode(event.details), as: UTF8.self)
        guard let sequence = try await AuditEventStore.append(event, detailsJSON: details, on: connection, logger: logger) else {
            throw AuditLogError.notAppended
        }
        return sequence
    }
}
