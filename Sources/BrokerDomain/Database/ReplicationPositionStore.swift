import Logging
import PostgresNIO

/// Where a primary's write-ahead log stands and how far a standby has replayed it, in bytes from the log's
/// start: what `ReplicaStaleness` measures and what a download's chunks compare (`DatabaseReads`).
enum ReplicationPositionStore {
    /// The primary's WAL position now: its insert position, which is past the commit record of every
    /// transaction visible to a statement that ran before this one on any connection (a commit becomes
    /// visible only after its record is inserted), even one committed without waiting for its flush.
    static func position(of connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.query("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8", logger: logger).collect()
        return try rows.first?.decode(Int64.self) ?? 0
    }

    /// How far the server has replayed its primary's WAL; nil when it is not a standby (a primary, or a
    /// standby promoted since). A statement that starts after this one on the same standby sees every
    /// transaction whose commit record lies before the returned position.
    static func replayed(by connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        let rows = try await connection.query(
            "SELECT CASE WHEN pg_is_in_recovery() THEN (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8 END", logger: logger
        ).collect()
        return try rows.first?.decode(Int64?.self) ?? nil
    }
}
