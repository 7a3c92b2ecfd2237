import Foundation
import Logging
import PostgresNIO

/// The SQL of a person's data revision (`sample_arrivals.revision`).
package enum SampleRevisionStore {
    /// The person's data revision (`sample_arrivals.revision`): moved by every correction and change of
    /// sharing preferences, so a download knows whether a chunk it read ahead is still what it may send.
    static func dataRevision(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        try await connection.query("SELECT revision FROM sample_arrivals WHERE user_id = \(userID)", logger: logger)
            .collect().first?.decode(Int64.self) ?? 0
    }

    /// Moves the person's data revision, on the transaction of the change that moves it.
    package static func advanceDataRevision(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE sample_arrivals SET revision = revision + 1 WHERE user_id = \(userID)", logger: logger)
    }
}
