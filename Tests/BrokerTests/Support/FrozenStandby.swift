import Logging
import PostgresNIO

@testable import BrokerDomain

/// A standby whose data stopped at a moment the test chose: every read on it runs in a transaction that
/// imports a snapshot exported then (`pg_export_snapshot`), so it sees nothing committed on the database
/// since, as a standby that has not replayed it. It reports `replayed` as its replay position: the primary's
/// position noted before the snapshot (true to it), or more (a standby that claims to hold what it lacks,
/// to show a check that does not trust the position).
struct FrozenStandby: StandbyConnections {
    let pool: DatabasePool
    let snapshot: String
    let replayed: Int64?

    func withReplayedConnection<Result: Sendable>(
        logger: Logger, _ body: @Sendable (PostgresConnection, _ replayed: @Sendable () async throws -> Int64?) async throws -> Result
    ) async throws -> Result {
        try await pool.withConnection { connection in
            _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: logger)
            _ = try await connection.query(PostgresQuery(unsafeSQL: "SET TRANSACTION SNAPSHOT '\(snapshot)'"), logger: logger)
            do {
                let replayed = replayed
                let result = try await body(connection, { replayed })
                _ = try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Freezes `url`'s database now, for `body`. `claimsReplayed` replaces the true replay position (the
    /// primary's position just before the snapshot).
    static func freezing<T: Sendable>(
        _ url: DatabaseURL, claimsReplayed: Int64? = nil, _ body: @escaping @Sendable (FrozenStandby) async throws -> T
    ) async throws -> T {
        let logger = TestDatabase.logger
        return try await TestDatabase.withClient(url) { exporter in
            try await exporter.withConnection { connection in
                let position = try await ReplicationPositionStore.position(of: connection, logger: logger)
                _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: logger)
                let snapshot = try await connection.query("SELECT pg_export_snapshot()", logger: logger).collect()[0].decode(String.self)
                // The exporting transaction stays open while the snapshot is in use.
                let outcome: Swift.Result<T, any Error>
                do {
                    outcome = .success(
                        try await TestDatabase.withClient(url) { pool in
                            try await body(FrozenStandby(pool: pool, snapshot: snapshot, replayed: claimsReplayed ?? position))
                        })
                } catch {
                    outcome = .failure(error)
                }
                _ = try await connection.query("COMMIT", logger: logger)
                return try outcome.get()
            }
        }
    }
}
