import Logging
import PostgresNIO
import ServiceLifecycle

/// Where reads that may lag go (issue 34, `DATABASE_READ_URL`): a standby while `ReplicaStaleness` says its
/// data is at most `DATABASE_READ_MAX_STALENESS` old, otherwise the primary. Only reads whose use tolerates
/// that age, or checks it, take it:
/// - a group request's first evaluation (`source()`: its consent is checked again on the primary under the
///   ledger lock);
/// - a peer statistics month's exact cells (`onStandby`: the consent version is checked again in the
///   publishing transaction);
/// - a download's chunks (`read(replayedPast:)`: only on a standby that has replayed the primary's position at
///   the plan, so it holds every row the plan releases; each chunk's data revision is checked on the primary).
///
/// Everything a person or company changes, the privacy ledger and what a release records stay on the primary.
package struct DatabaseReads: Sendable {
    package let primary: DatabasePool
    let replica: DatabasePool?
    let staleness: ReplicaStaleness?
    /// The standby's connections for `read(replayedPast:)` and `onStandby`: `replica`'s, or a test's.
    let standby: (any StandbyConnections)?
    /// Whether the replica may be read now (its staleness within the bound).
    private let replicaUsable: @Sendable () -> Bool

    /// No standby: every read on the primary.
    package init(primary: DatabasePool) {
        self.primary = primary
        self.replica = nil
        self.staleness = nil
        self.standby = nil
        self.replicaUsable = { false }
    }

    package init(primary: DatabasePool, replica: DatabasePool, staleness: ReplicaStaleness) {
        self.primary = primary
        self.replica = replica
        self.staleness = staleness
        self.standby = replica
        self.replicaUsable = { staleness.usable }
    }

    /// `replica` is read whenever `usable` says so, with nothing measured: for tests that make a standby's lag
    /// by hand (a change committed on the primary between a read and the ledger lock).
    package init(primary: DatabasePool, replica: DatabasePool, usable: @escaping @Sendable () -> Bool) {
        self.primary = primary
        self.replica = replica
        self.staleness = nil
        self.standby = replica
        self.replicaUsable = usable
    }

    /// Downloads and peer statistics read `standby` whenever they may; group evaluations read the primary:
    /// for tests whose standby is frozen at a snapshot of their own.
    package init(primary: DatabasePool, standby: any StandbyConnections) {
        self.primary = primary
        self.replica = nil
        self.staleness = nil
        self.standby = standby
        self.replicaUsable = { true }
    }

    /// What must run beside the server for the standby to be used: its pool, then its staleness measure.
    package var services: [any Service] {
        guard let replica, let staleness else { return [] }
        return [replica, staleness]
    }

    /// How long a read waits for the standby to replay its plan's position before going to the primary.
    static let catchUpWait = Duration.milliseconds(20)

    /// Whether a standby is configured at all: a plan then notes the primary's position for its reads.
    var hasStandby: Bool { standby != nil }

    /// The primary's WAL position for a plan being made on `connection` (a primary's), when a standby is
    /// configured; nil otherwise (the plan's reads then stay on the primary without asking).
    func planPosition(on connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        guard hasStandby else { return nil }
        return try await ReplicationPositionStore.position(of: connection, logger: logger)
    }

    /// The pool to read from now, and whether it is the standby's.
    package func source() -> (pool: DatabasePool, onStandby: Bool) {
        if let replica, replicaUsable() { return (replica, true) }
        return (primary, false)
    }

    /// Runs `body` on the standby when its data is recent enough; nil when it is not, or when the read there
    /// failed (logged: the caller then reads the primary).
    func onStandby<Result: Sendable>(logger: Logger, _ body: @Sendable (PostgresConnection) async throws -> Result) async throws
        -> Result?
    {
        try await standbyRead(logger: logger) { connection, _ in try await body(connection) }
    }

    /// Runs `body`, a read belonging to a plan made on the primary when its WAL stood at `position`, on the
    /// standby when the standby is recent enough and has replayed past `position` (it then holds everything
    /// the plan saw: no row the plan releases is missing there); otherwise, or when the read there fails, on
    /// the primary. A standby that keeps up replays a moment after the primary writes, while a download's
    /// first chunk is read a moment after its plan: it is waited for, but at most `catchUpWait`.
    func read<Result: Sendable>(
        replayedPast position: Int64?, logger: Logger, _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> (value: Result, onStandby: Bool) {
        if let position,
            let value: Result = try await standbyRead(
                logger: logger,
                { connection, replayed in
                    let deadline = ContinuousClock.now + Self.catchUpWait
                    while true {
                        guard let at = try await replayed() else { return nil }
                        if at >= position { break }
                        guard ContinuousClock.now < deadline else { return nil }
                        try await Task.sleep(for: .milliseconds(2))
                    }
                    return try await body(connection)
                })
        {
            return (value, true)
        }
        return (try await primary.withConnection { try await body($0) }, false)
    }

    /// `body` on a connection of the standby, when it is recent enough; nil when it is not, when `body`
    /// declines (nil), or when the read there failed (logged).
    private func standbyRead<Result: Sendable>(
        logger: Logger, _ body: @Sendable (PostgresConnection, _ replayed: @Sendable () async throws -> Int64?) async throws -> Result?
    ) async throws -> Result? {
        guard let standby, replicaUsable() else { return nil }
        do {
            return try await standby.withReplayedConnection(logger: logger, body)
        } catch  where !(error is CancellationError) {
            logger.warning("a read on the standby failed; reading the primary", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
