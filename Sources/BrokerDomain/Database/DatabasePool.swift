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
package struct DatabasePool: Sendable, Service {
    package let client: PostgresClient
    package let leaseTimeout: Duration
    let logger: Logger

    /// Set once `run()` has begun: a lease asked for before waits for it (within its own bound) rather than
    /// reach PostgresNIO first, which then warns that `run()` was not called. Background services start
    /// beside the pool's `run()`, and on a busy machine one of them could lease first.
    private let started: RunStarted

    package init(client: PostgresClient, leaseTimeout: Duration = .seconds(5), logger: Logger) {
        self.client = client
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        self.started = RunStarted()
    }

    /// Per pool, where the lease the current task holds was taken (`file:line`). Child tasks inherit it,
    /// so a task group fanning out from inside a lease is caught too. (A lease of another pool, such as a
    /// test's own, is a different queue and no deadlock of this kind.)
    @TaskLocal static var heldLeases: [ObjectIdentifier: String] = [:]

    private var identity: ObjectIdentifier { ObjectIdentifier(client) }

    package func run() async {
        started.flag.store(true, ordering: .releasing)
        await client.run()
    }

    /// Runs `body` with a connection of the pool, waiting at most `leaseTimeout` for one.
    /// `waitingAtMost` replaces `leaseTimeout` for work that must not be given up lightly (the record of
    /// data already sent).
    package func withConnection<Result>(
        waitingAtMost wait: Duration? = nil, file: String = #fileID, line: Int = #line, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try refuseNestedLease(file: file, line: line)
        let handoff = LeaseHandoff()
        // The lease is taken by a task of its own that hands the connection over: its wait can then be
        // abandoned on time-out (cancelling it withdraws the request from PostgresNIO's queue) without
        // cancelling the caller.
        let leasing = Task { [client, started] in
            do {
                // Until `run()` has begun (a moment after the server starts); the timer below bounds it too.
                while !started.flag.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(2)) }
                try await client.withConnection { connection in
                    guard handoff.offer(connection) else { return }  // the caller gave up meanwhile
                    await handoff.waitUntilReturned()
                }
            } catch {
                handoff.abandon(error)
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
            try await connection.withTransaction(logger: logger, file: file, line: line) { try await body($0) }
        }
    }

    /// One statement on a connection of its own; the rows are read in full before the lease ends.
    @discardableResult
    package func query(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws -> CollectedRows {
        try await withConnection(file: file, line: line) { connection in
            CollectedRows(rows: try await connection.query(query, logger: logger, file: file, line: line).collect())
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

/// Whether a pool's `run()` has begun (a reference, so every copy of the pool sees it).
private final class RunStarted: Sendable {
    let flag = Atomic<Bool>(false)
}
