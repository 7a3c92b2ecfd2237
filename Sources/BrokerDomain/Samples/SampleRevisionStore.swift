import Foundation
import Logging
import PostgresNIO

/// The SQL of a person's data revision (`data_revisions`).
package enum SampleRevisionStore {
    /// The person's data revision: moved by every correction and change of sharing preferences, so a
    /// download knows whether a chunk it read ahead is still what it may send.
    static func dataRevision(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        try await connection.query("SELECT revision FROM data_revisions WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode(Int64.self) ?? 0
    }

    /// Moves the person's data revision, on the transaction of the change that moves it.
    package static func advanceDataRevision(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        // Taken last by every caller (after the account row or the arrival row), so it orders no other lock.
        try await connection.query(
            """
            INSERT INTO data_revisions (user_id, revision) VALUES (\(userID), 1)
            ON CONFLICT (user_id) DO UPDATE SET revision = data_revisions.revision + 1
            """, logger: logger)
    }
}
