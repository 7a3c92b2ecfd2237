import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The server's pool of PostgreSQL connections, with the two rules a burst cannot get around:
///
/// - **Waiting for a connection is bounded.** PostgresNIO queues a lease request until a connection is
///   free, however long that takes; here a request that waits longer than `leaseTimeout` gets
///   `DatabaseBusy` (a 503 with `Retry-After`) instead of a hang.
/// - **No code waits for a connection while holding one.** With N connections, N callers that each hold
///   one and wait for a second deadlock the pool (issue 14: group evaluations did exactly that). A nested
///   lease is refused in debug builds, so every test that reaches one fails at once, whatever the pool
///   size; a release build logs it and goes on, because refusing would turn a rare path into an outage.
///
/// `query` collects its rows before it returns: a row sequence still being read keeps its connection
/// leased, which would make every loop over it a lease held while the loop's body leases another.
///
/// A pool made from a `DatabaseURL` can **move to another host** (`move(to:)`, called by the
/// `DatabaseWatchdog` after a failover): a PostgresNIO client connects to one host, so the pool starts a
/// client for the new host, sends every new lease there, and retires the old client once the leases it
/// handed out have had `retirementGrace` to finish.
package struct DatabasePool: Sendable, Service {
    package let leaseTimeout: Duration
    let logger: Logger
    /// The client new leases go to, and the ones still running; shared by every copy of the pool.
    private let clients: PoolClients
    /// Where a moved pool's new client connects (nil for a pool made from a client, which stays put).
    private let url: DatabaseURL?
    private let limits: DatabaseLimits

    /// A pool on one client for its whole life (tests, and the pools of one-off commands on one host).
    package init(client: PostgresClient, leaseTimeout: Duration = .seconds(5), logger: Logger) {
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        self.clients = PoolClients(first: client, host: nil)
        self.url = nil
        self.limits = DatabaseLimits()
    }

    /// A pool on `host` (by default the URL's first) that can move to another host of `url`.
    package init(url: DatabaseURL, host: DatabaseHost? = nil, limits: DatabaseLimits, logger: Logger) {
        let host = host ?? url.hosts[0]
        self.leaseTimeout = limits.leaseTimeout
        self.logger = logger
        self.url = url
        self.limits = limits
        self.clients = PoolClients(
            first: PostgresClient(
                configuration: url.clientConfiguration(limits: limits, host: host), backgroundLogger: PostgresClientLog.logger(forwardingTo: logger)),
            host: host)
    }

    /// The client new leases go to (for tests that run a client's `run()` themselves).
    package var client: PostgresClient { clients.current.client }

    /// The host new leases go to, when the pool was made from a URL.
    package var host: DatabaseHost? { clients.current.host }

    /// How long a retired client keeps running for the leases it handed out before the move: longer than a
    /// lease waits, so a request that got its connection just before the move can finish its statement.
    static let retirementGrace: Duration = .seconds(10)

    /// Per pool, where the lease the current task holds was taken (`file:line`). Child tasks inherit it,
    /// so a task group fanning out from inside a lease is caught too. (A lease of another pool, such as a
    /// test's own, is a different queue and no deadlock of this kind.)
    @TaskLocal static var heldLeases: [ObjectIdentifier: String] = [:]

    private var identity: ObjectIdentifier { ObjectIdentifier(clients) }

    /// Runs the first client, and each one `move(to:)` starts, until each is retired, or until the pool is
    /// cancelled, or until its graceful shutdown begins and the leases then in flight have ended.
    ///
    /// The pool is the first service to start and the last to stop, but work can still need it then: a
    /// download whose client hung up during the stop records what it sent (the access log must show it),
    /// a request's transaction commits. So at a graceful shutdown the clients keep running until no lease is
    /// asked for or held, for at most `DatabaseLimits.drainBound`; leases asked for meanwhile are still served. (The clients
    /// run in a detached task because a PostgresNIO client ends its `run()` by itself at the graceful
    /// shutdown of the task it runs in.)
    package func run() async {
        let clients = clients
        let running = Task.detached {
            await withDiscardingTaskGroup { group in
                for await generation in clients.generations {
                    group.addTask { await generation.run() }
                }
            }
        }
        await withTaskCancellationHandler {
            if (try? await gracefulShutdown()) != nil { await drain() }
            running.cancel()
            await running.value
        } onCancel: {
            running.cancel()
        }
    }

    private func drain() async {
        let deadline = ContinuousClock.now + limits.drainBound
        while clients.leasesInFlight.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let left = clients.leasesInFlight.load(ordering: .acquiring)
        if left > 0 {
            logger.warning(
                "the database pool stopped with leases still in flight",
                metadata: ["database.leases": "\(left)", "database.drain_bound": "\(limits.drainBound)"])
        }
    }

    /// Sends new leases to a client for `host` from now on, and retires the current one after
    /// `retirementGrace`. Does nothing for a pool made from a client, or when `host` is already the pool's.
    package func move(to host: DatabaseHost) {
        guard let url, host != self.host else { return }
        let client = PostgresClient(
            configuration: url.clientConfiguration(limits: limits, host: host), backgroundLogger: PostgresClientLog.logger(forwardingTo: logger))
        let previous = clients.replace(with: client, host: host)
        logger.notice(
            "database pool moved", metadata: ["database.host": "\(host)", "database.previous_host": "\(previous.host.map(\.description) ?? "-")"])
        Task {
            try? await Task.sleep(for: Self.retirementGrace)
            previous.retire()
        }
    }

    /// Runs `body` with a connection of the pool, waiting at most `leaseTimeout` for one.
    /// `waitingAtMost` replaces `leaseTimeout` for work that must not be given up lightly (the record of
    /// data already sent).
    ///
    /// For reads. A write whose success a client is told goes in `withTransaction`: a statement run here on
    /// its own commits outside it, and PostgreSQL can report it done while its commit still waits for the
    /// synchronous standby, which a failover then loses (`confirmAutocommit` says how; the upload paths,
    /// which avoid a transaction's round trips, confirm instead). Logging out, revoking a key and removing a
    /// webhook were written here and told the client 204 for a revocation the promoted standby never had.
    package func withConnection<Result>(
        waitingAtMost wait: Duration? = nil, file: String = #fileID, line: Int = #line, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try refuseNestedLease(file: file, line: line)
        clients.leasesInFlight.add(1, ordering: .acquiringAndReleasing)
        defer { clients.leasesInFlight.subtract(1, ordering: .acquiringAndReleasing) }
        let handoff = LeaseHandoff()
        // The lease is taken by a task of its own that hands the connection over: its wait can then be
        // abandoned on time-out (cancelling it withdraws the request from PostgresNIO's queue) without
        // cancelling the caller.
        let clients = clients
        let leasing = Task {
            var generation = clients.current
            while true {
                do {
                    // Until the client's `run()` has begun (a moment after the server starts, or after a move);
                    // the timer below bounds it too.
                    while !generation.started.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(2)) }
                    try await Self.lease(from: generation, handingOverTo: handoff)
                    return
                } catch {
                    // The pool moved while this lease waited in the old client's queue: lease again from the new
                    // client (work that must be recorded waits long, and the old host is gone). Otherwise, or
                    // once the caller has given up, the caller gets the error.
                    let current = clients.current
                    if current !== generation, !Task.isCancelled {
                        generation = current
                        continue
                    }
                    handoff.abandon(error)
                    return
                }
            }
        }
        let timer = Task { [wait = wait ?? leaseTimeout] in
            try? await Task.sleep(for: wait)
            if !Task.isCancelled, handoff.abandon(DatabaseBusy(waited: wait)) { leasing.cancel() }
        }
        defer { timer.cancel() }
        let connection = try await withTaskCancellationHandler {
            try await handoff.take()
        } onCancel: {
            if handoff.abandon(CancellationError()) { leasing.cancel() }
        }
        timer.cancel()
        defer { handoff.giveBack() }
        var held = Self.heldLeases
        held[identity] = "\(file):\(line)"
        do {
            let result = try await Self.$heldLeases.withValue(held) { try await body(connection) }
            if connection.takeCloseMark() { try? await connection.close() }
            return result
        } catch {
            // A statement that could not be prepared is remembered by PostgresNIO for the connection's life
            // (`preparedRows`): the pool gets a fresh connection instead.
            if connection.takeCloseMark() { try? await connection.close() }
            throw error
        }
    }

    /// Runs `body` in a transaction (committed when it returns, rolled back when it throws).
    package func withTransaction<Result>(
        logger: Logger, waitingAtMost wait: Duration? = nil, file: String = #fileID, line: Int = #line,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection(waitingAtMost: wait, file: file, line: line) { connection in
            try await connection.withUnstrandedTransaction(logger: logger, file: file, line: line) { try await body($0) }
        }
    }

    /// One statement on a connection of its own; the rows are read in full before the lease ends.
    @discardableResult
    package func query(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws -> CollectedRows {
        try await withConnection(file: file, line: line) { connection in
            CollectedRows(rows: try await connection.query(query, logger: logger, file: file, line: line).collect())
        }
    }

    /// One lease from `generation`'s client, handed over to the caller; given up (throwing
    /// `CancellationError`) if the pool moves before a connection came, so that the caller's wait goes on at
    /// the new host instead of ending with the old client's retirement.
    private static func lease(from generation: PoolClients.Generation, handingOverTo handoff: LeaseHandoff) async throws {
        let attempt = Task {
            try await generation.client.withConnection { connection in
                guard handoff.offer(connection) else { return }  // the caller gave up meanwhile
                await handoff.waitUntilReturned()
            }
        }
        // Cancelling the attempt once the connection was offered changes nothing: the handoff waits for its
        // return regardless, so a caller's statement is never cut short by a move.
        let watcher = Task {
            await generation.waitUntilReplaced()
            if !Task.isCancelled { attempt.cancel() }
        }
        defer { watcher.cancel() }
        try await withTaskCancellationHandler {
            try await attempt.value
        } onCancel: {
            attempt.cancel()
        }
    }

    private func refuseNestedLease(file: String, line: Int) throws {
        guard let outer = Self.heldLeases[identity] else { return }
        logger.error("a connection was requested while holding one", metadata: ["held.at": "\(outer)", "requested.at": "\(file):\(line)"])
        #if DEBUG
            throw NestedLease(heldAt: outer, requestedAt: "\(file):\(line)")
        #endif
    }
}
