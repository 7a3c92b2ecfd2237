import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// How old the data of `DATABASE_READ_URL`'s standby may be, measured every `interval`, and so whether reads
/// may go there now (`DatabaseReads`).
///
/// Every interval it notes the primary's WAL position with the time, then asks the standby how far it has
/// replayed. Every transaction committed on the primary before a noted time ends at or before the position
/// noted then, so a standby that has replayed past it holds everything committed up to that time: its data is
/// at most `now - that time` old, an upper bound (about one interval while the standby keeps up, since an idle
/// primary's position does not move). A standby that does not answer, is not a standby (promoted: reads then
/// go to the primary, which is the same data), or is further behind than every note is not used.
package final class ReplicaStaleness: Service, Sendable {
    package init(
        primary: DatabasePool, replica: DatabasePool, replicaURL: DatabaseURL, bound: Duration, logger: Logger, interval: Duration = .seconds(1)
    ) {
        self.primary = primary
        self.replica = replica
        self.replicaURL = replicaURL
        self.bound = bound
        self.logger = logger
        self.interval = interval
    }

    let primary: DatabasePool
    let replica: DatabasePool
    let replicaURL: DatabaseURL
    /// `DATABASE_READ_MAX_STALENESS`: reads go to the standby only while its data is at most this old.
    package let bound: Duration
    let logger: Logger
    let interval: Duration

    private struct Mark {
        var at: ContinuousClock.Instant
        var position: Int64
    }

    private struct State {
        var marks: [Mark] = []
        var staleness: Duration?
        var measuredAt: ContinuousClock.Instant?
        /// Where reads were last said to go, so each change is logged once. (Not the previous measurement aged
        /// by the clock: for a standby that stopped replaying, that equals the new one, and the change would
        /// never show.)
        var announcedUsable = false
    }

    private let state = Mutex(State())

    /// The standby's data is at most this old, as last measured; nil when unknown or not a standby.
    package var staleness: Duration? {
        state.withLock { state in
            // A measurement ages with the clock: a standby last seen two intervals ago may be further behind now.
            guard let staleness = state.staleness, let measuredAt = state.measuredAt else { return nil }
            return staleness + (ContinuousClock.now - measuredAt)
        }
    }

    /// Whether reads may go to the standby now.
    package var usable: Bool { staleness.map { $0 <= bound } ?? false }

    package func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            await measure()
            try? await Task.sleep(for: interval)
        }
    }

    private func measure() async {
        let wait = Duration.seconds(2)
        let noted = ContinuousClock.now
        if let position = try? await primary.withConnection(
            waitingAtMost: wait, { try await ReplicationPositionStore.position(of: $0, logger: logger) })
        {
            state.withLock { state in
                state.marks.append(Mark(at: noted, position: position))
                // Marks older than the bound can only say the standby is too far behind; a few more are kept so
                // the log can say by how much.
                state.marks.removeAll { noted - $0.at > bound * 4 }
            }
        }
        var replay: Int64?
        var lookElsewhere = false
        do {
            replay = try await replica.withConnection(waitingAtMost: wait) { try await ReplicationPositionStore.replayed(by: $0, logger: logger) }
            // Not a standby (promoted in a failover, or a prefer-standby fallback to the primary): another host of
            // the URL may be one now.
            lookElsewhere = replay == nil
        } catch {
            // Lost: the standby may have come back elsewhere among the URL's hosts. (A busy pool is no reason to
            // move: the move would retire the client under evaluations allowed to run for minutes.)
            lookElsewhere = PostgresErrors.isConnectionFailure(error)
        }
        if lookElsewhere, replicaURL.hosts.count > 1, let host = await HostSelection(url: replicaURL, logger: logger).select() {
            replica.move(to: host)
        }
        let now = ContinuousClock.now
        state.withLock { state in
            let newest = replay.flatMap { replay in state.marks.last { $0.position <= replay } }
            state.staleness = newest.map { now - $0.at }
            state.measuredAt = now
        }
        let usable = usable
        let changed = state.withLock { state in
            defer { state.announcedUsable = usable }
            return state.announcedUsable != usable
        }
        if changed {
            logger.notice(
                usable ? "reads go to the standby" : "reads go to the primary",
                metadata: ["database.read_staleness": "\(staleness.map { "\($0)" } ?? "unknown")", "database.read_bound": "\(bound)"])
        }
    }
}
