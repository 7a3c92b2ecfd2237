import BrokerTestSupport
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 14: no burst or fault stalls the server. Every wait (a pooled connection, an evaluation slot, a
/// lock, a statement, a transaction left idle) has a bound, and hitting it is a 503 with `Retry-After`.
@Suite("Bounded waits")
struct BoundedWaitTests {
    static let logger = TestDatabase.logger

    /// A pool of its own on the test cluster, with `limits`.
    static func withPool<T: Sendable>(_ limits: DatabaseLimits, _ body: @escaping @Sendable (DatabasePool) async throws -> T) async throws -> T {
        try await withDatabase(url: try TestDatabase.adminURL.text, logger: logger, limits: limits, body)
    }

    /// Holds one of `pool`'s connections until `release` is called; returns once it holds it.
    static func holdConnection(of pool: DatabasePool) async -> (release: @Sendable () -> Void, holder: Task<Void, any Error>) {
        let (acquired, acquiredSignal) = AsyncStream<Void>.makeStream()
        let (released, releaseSignal) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await pool.withConnection { _ in
                acquiredSignal.yield()
                for await _ in released { break }
            }
        }
        for await _ in acquired { break }
        return ({ releaseSignal.yield() }, holder)
    }

    @Test("waiting for a pooled connection is bounded, a cancelled wait ends at once, and neither leaks the connection")
    func leaseTimeout() async throws {
        var limits = DatabaseLimits()
        limits.poolSize = 1
        limits.leaseTimeout = .milliseconds(300)
        try await Self.withPool(limits) { pool in
            let (release, holder) = await Self.holdConnection(of: pool)
            await #expect(throws: DatabaseBusy.self) { try await pool.withConnection { _ in } }
            let waiting = Task { try await pool.withConnection { _ in } }
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            release()
            try await holder.value
            // Both abandoned waits left the one connection free for the next caller.
            #expect(try await pool.query("SELECT 1", logger: Self.logger).collect().count == 1)
        }
    }

    @Test("the bounds map to 503 with Retry-After: a busy pool, busy evaluation slots, lock and statement time-outs")
    func overloadIsServiceUnavailable() {
        for error: any Error in [DatabaseBusy(waited: .seconds(5)), EvaluationsBusy(waited: .seconds(30))] {
            let problem = ProblemMiddleware.problem(for: error, logger: Self.logger)
            #expect(problem.status == .serviceUnavailable)
            #expect(problem.headers[.retryAfter] == "5")
            #expect(problem.slug == "server-busy")
        }
        #expect(ProblemMiddleware.problem(for: NestedLease(heldAt: "a", requestedAt: "b"), logger: Self.logger).status == .internalServerError)
    }

    @Test("a connection asked for while holding one of the same pool is refused, in a child task too; another pool's is not")
    func nestedLeaseRefused() async throws {
        try await Self.withPool(.unbounded) { pool in
            await #expect(throws: NestedLease.self) {
                try await pool.withConnection { _ in try await pool.query("SELECT 1", logger: Self.logger) }
            }
            do {
                try await pool.withTransaction(logger: Self.logger) { _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await pool.withConnection { _ in } }
                        try await group.waitForAll()
                    }
                }
                Issue.record("a lease taken in a child task of a lease was allowed")
            } catch {
                #expect(PostgresErrors.unwrapTransaction(error) is NestedLease, "\(String(reflecting: error))")
            }
            try await Self.withPool(.unbounded) { other in
                try await pool.withConnection { _ in _ = try await other.query("SELECT 1", logger: Self.logger) }
            }
            // Leases one after the other are what the rule asks for.
            try await pool.withConnection { _ in }
            try await pool.withConnection { _ in }
        }
    }

    @Test("each connection starts with the server's statement, lock and idle-in-transaction bounds, and PostgreSQL enforces them")
    func sessionBounds() async throws {
        var limits = DatabaseLimits()
        limits.statementTimeout = .seconds(1)
        limits.lockTimeout = .milliseconds(300)
        limits.idleInTransactionTimeout = .seconds(2)
        try await Self.withPool(limits) { pool in
            let settings = try await pool.query(
                """
                SELECT current_setting('statement_timeout'), current_setting('lock_timeout'),
                       current_setting('idle_in_transaction_session_timeout')
                """, logger: Self.logger
            ).collect()[0].decode((String, String, String).self)
            #expect(settings == ("1s", "300ms", "2s"))

            do {
                try await pool.query("SELECT pg_sleep(5)", logger: Self.logger)
                Issue.record("a statement outlived the statement timeout")
            } catch {
                #expect(PostgresErrors.isOverload(error), "\(String(reflecting: error))")
            }

            // A transaction that takes a lock and then stalls (a stuck instance) loses the lock once it has
            // been idle for the bound: another session can take it.
            try await Self.withPool(.unbounded) { other in
                let lockedAndStalled = Task {
                    try await pool.withConnection { connection in
                        try await connection.query("BEGIN", logger: Self.logger)
                        try await connection.query("SELECT pg_advisory_xact_lock(1414)", logger: Self.logger)
                        try await Task.sleep(for: .seconds(6))
                    }
                }
                try await Task.sleep(for: .seconds(5))
                let taken = try await other.query("SELECT pg_try_advisory_lock(1414)", logger: Self.logger).collect()[0].decode(Bool.self)
                #expect(taken, "the stalled transaction still held its lock")
                // Its session was ended; on a loaded machine possibly before it took the lock at all.
                _ = await lockedAndStalled.result
            }
        }
    }

    @Test("a group request that cannot get the privacy ledger's lock in time is a 503 with Retry-After and writes nothing")
    func heldEvaluationLock() async throws {
        try await TestHarness.run(
            configure: {
                GroupFixtures.smallK(&$0)
                $0.database.lockTimeout = .milliseconds(500)
            }, noise: NoNoise()
        ) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let body =
                #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":60,"max":80}],"demographics":{},"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"Study"}"#
            // Another instance, stalled in the middle of a release, holds the ledger's lock (every release's
            // budget check and debit run under it).
            try await TestDatabase.withClient(harness.databaseURL) { other in
                try await other.withConnection { connection in
                    // This session must outlive however long a loaded machine takes to answer the request below;
                    // the server's own sessions keep their bound (that is what the request hits).
                    try await connection.query("SET idle_in_transaction_session_timeout = 0", logger: Self.logger)
                    try await connection.query("BEGIN", logger: Self.logger)
                    try await connection.query(
                        "SELECT pg_advisory_xact_lock(hashtext('data4help.privacy_ledger'))", logger: Self.logger)
                    let blocked = try await harness.request(.post, "/v1/group-requests", json: body, token: company)
                    #expect(blocked.status == .serviceUnavailable, "\(harness.text(blocked))")
                    #expect(blocked.headers[.retryAfter] == "5")
                    #expect(try harness.object(blocked)["type"] as? String == "https://data4help.example/problems/server-busy")
                    try await connection.query("ROLLBACK", logger: Self.logger)
                }
            }
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 0)
            #expect(try await harness.int("SELECT count(*) FROM group_releases") == 0)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger") == 0)
            #expect(try await harness.int("SELECT count(*) FROM privacy_person_loss") == 0)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action LIKE 'group_request.%'") == 0)
            let later = try await harness.request(.post, "/v1/group-requests", json: body, token: company)
            #expect(later.status == .created)
        }
    }
}
