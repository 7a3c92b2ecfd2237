import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

@testable import BrokerDomain

/// The pool is the last service to stop, and work can still need it then (a download whose client hung up
/// during the stop records what it sent). A graceful stop waits for the leases in flight, serving those asked
/// for meanwhile, for at most `DatabaseLimits.drainBound`; a PostgresNIO client left to itself closes its
/// connections as soon as the stop begins.
@Suite("The database pool's graceful stop")
struct DatabasePoolStopTests {
    static let logger = TestDatabase.logger

    /// Runs `pool` in a service group of its own; `body` gets a way to begin the graceful stop.
    static func serving(_ pool: DatabasePool, _ body: (ServiceGroup) async throws -> Void) async throws {
        let group = ServiceGroup(configuration: .init(services: [pool], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await body(group)
            try await tasks.waitForAll()
        }
    }

    @Test("a graceful stop lets the lease in flight finish its statement and serves a lease asked for during the stop")
    func leasesInFlightFinish() async throws {
        try await TestDatabase.withEmptyDatabase { url in
            let pool = DatabasePool(url: url, limits: DatabaseLimits(), logger: Self.logger)
            try await Self.serving(pool) { group in
                let (leased, leasedNow) = AsyncStream.makeStream(of: Void.self)
                let held = Task {
                    try await pool.withConnection { connection in
                        leasedNow.yield()
                        try await Task.sleep(for: .seconds(1))
                        return try await connection.query("SELECT 1", logger: Self.logger).collect().count
                    }
                }
                for await _ in leased { break }
                await group.triggerGracefulShutdown()
                let late = try await pool.withConnection { connection in
                    try await connection.query("SELECT 2", logger: Self.logger).collect().count
                }
                #expect(late == 1, "a lease asked for during the stop")
                #expect(try await held.value == 1, "the lease held when the stop began")
            }
        }
    }

    @Test("a lease that does not end holds the stop for the drain bound, no longer")
    func drainIsBounded() async throws {
        try await TestDatabase.withEmptyDatabase { url in
            var limits = DatabaseLimits()
            limits.drainBound = .milliseconds(500)
            let pool = DatabasePool(url: url, limits: limits, logger: Self.logger)
            let triggered = Mutex<ContinuousClock.Instant?>(nil)
            let stuck = Mutex<Task<Void, any Error>?>(nil)
            try await Self.serving(pool) { group in
                let (leased, leasedNow) = AsyncStream.makeStream(of: Void.self)
                stuck.withLock {
                    $0 = Task {
                        try await pool.withConnection { _ in
                            leasedNow.yield()
                            try await Task.sleep(for: .seconds(30))
                        }
                    }
                }
                for await _ in leased { break }
                triggered.withLock { $0 = .now }
                await group.triggerGracefulShutdown()
            }
            let took = ContinuousClock.now - (try #require(triggered.withLock { $0 }))
            stuck.withLock { $0?.cancel() }
            #expect(took >= .milliseconds(500), "the stop did not wait for the lease in flight")
            #expect(took < .seconds(5), "the stop waited beyond its bound")
        }
    }
}
