import Logging
import PostgresNIO

/// Where reads on a standby get their connection: its pool's leases, each with a way to ask how far that
/// server has replayed the primary's WAL (nil: it is not a standby), on the same connection, so statements
/// run after the answer see at least that much even when the pool has since moved to another host. Tests
/// pose a standby frozen at a snapshot of their own, whose data is stale in a way they choose.
package protocol StandbyConnections: Sendable {
    func withReplayedConnection<Result: Sendable>(
        logger: Logger, _ body: @Sendable (PostgresConnection, _ replayed: @Sendable () async throws -> Int64?) async throws -> Result
    ) async throws -> Result
}

extension DatabasePool: StandbyConnections {
    package func withReplayedConnection<Result: Sendable>(
        logger: Logger, _ body: @Sendable (PostgresConnection, _ replayed: @Sendable () async throws -> Int64?) async throws -> Result
    ) async throws -> Result {
        try await withConnection { connection in
            try await body(connection, { try await ReplicationPositionStore.replayed(by: connection, logger: logger) })
        }
    }
}
