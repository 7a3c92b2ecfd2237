import Foundation
import Logging
import PostgresNIO

/// The SQL of sharing preferences (`unshared_types`, migration 0025).
///
/// Reading them here is for the person's page and the grant check. Everything that hands a company a
/// person's samples reads the table itself, inside its own statement, so that each statement sees the
/// preference as of its own snapshot: a type unshared while a download streams is gone from the next chunk.
/// They are `SingleRequestStore+Download` (the bound, the available types, every chunk),
/// `SampleStore.announceArrival` (a subscription's webhook), `GroupCohortStore.cohort` (filters),
/// `CellAggregateStore.groupCells` (group cells) and `PeerCellStore.exactCells` (peer cells).
package enum SharingPreferenceStore {
    /// The sample types the person does not share: what the accept path refuses to grant.
    package static func unsharedTypes(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Set<SampleType> {
        Set(try await preferences(of: userID, on: connection, logger: logger).unshared.keys)
    }

    static func preferences(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> SharingPreferences {
        let rows = try await connection.query("SELECT type, since FROM unshared_types WHERE user_id = \(userID)", logger: logger)
        var unshared: [SampleType: Date] = [:]
        for try await (code, since) in rows.decode((Int16, Date).self) {
            // A code no type has (a newer server's type, read by an older one) is not shared: it is not released anyway.
            guard let type = SampleType(code: code) else { continue }
            unshared[type] = since
        }
        return SharingPreferences(unshared: unshared)
    }

    /// Locks the person's account row (FOR NO KEY UPDATE, which uploads never wait for) until the
    /// transaction ends: two changes of the same person's preferences (and a grant that takes the same
    /// lock) follow one another, so each reads what the other wrote and the audit log names real changes.
    static func lock(userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        // Read, so a lock time-out is thrown here (a 503), not met by the next statement as "transaction aborted".
        _ = try await connection.query("SELECT 1 FROM accounts WHERE id = \(userID) FOR NO KEY UPDATE", logger: logger).collect()
    }

    /// Stops sharing `types` (those already unshared keep their `since`) and shares `shared` again, in one
    /// statement each.
    static func set(unshared types: Set<SampleType>, shared: Set<SampleType>, userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        if !types.isEmpty {
            try await connection.query(
                """
                INSERT INTO unshared_types (user_id, type)
                SELECT \(userID), t FROM unnest(\(types.map(\.code))::int2[]) AS t
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if !shared.isEmpty {
            try await connection.query(
                "DELETE FROM unshared_types WHERE user_id = \(userID) AND type = ANY(\(shared.map(\.code))::int2[])", logger: logger)
        }
    }
}
