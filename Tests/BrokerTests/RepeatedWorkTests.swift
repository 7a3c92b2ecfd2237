import BrokerTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The background loops' shape (`repeatUntilShutdown`): a failure is a warning, the server stopping is not.
@Suite("Repeated work")
struct RepeatedWorkTests {
    struct Refused: Error {}

    /// Runs a loop whose work `work`, waits until it has started `starts` times, then cancels it as a graceful
    /// shutdown does; returns what it logged at warning or above.
    private func run(starts: Int, _ work: @escaping @Sendable (Int) async throws -> Bool) async throws -> [ServerLog.Line] {
        let log = ServerLog()
        let logger = log.logger(label: "test", level: .trace)
        let (started, continuation) = AsyncStream.makeStream(of: Int.self)
        let count = Atomic<Int>(0)
        let loop = Task {
            await repeatUntilShutdown(every: .milliseconds(10), logger: logger, failure: "the work failed; will retry") {
                let number = count.add(1, ordering: .relaxed).newValue
                continuation.yield(number)
                return try await work(number)
            }
        }
        for await number in started where number >= starts { break }
        loop.cancel()
        await loop.value
        return log.unexpected(allowing: [])
    }

    @Test("stopping while the work runs (its wait throws CancellationError) logs nothing")
    func cancelledWorkLogsNothing() async throws {
        let lines = try await run(starts: 1) { _ in
            try await Task.sleep(for: .seconds(60))
            return false
        }
        #expect(lines.isEmpty, "\(lines)")
    }

    @Test("a failure of the work is a warning, and the loop goes on")
    func failureIsAWarning() async throws {
        let lines = try await run(starts: 2) { number in
            if number == 1 { throw Refused() }
            try await Task.sleep(for: .seconds(60))
            return false
        }
        #expect(lines.count == 1)
        #expect(lines.first?.level == .warning)
        #expect(lines.first?.message == "the work failed; will retry")
    }

    /// A unit of work stuck where cancellation cannot reach it (an await PostgresNIO never answers) must not hold
    /// the server's stop for ever: CI's full run once waited on such a loop until its limit.
    @Test("work that ignores cancellation is abandoned stopBound after the stop, with a warning; work that ends is waited for")
    func stuckWorkIsAbandoned() async throws {
        let log = ServerLog()
        let (started, didStart) = AsyncStream.makeStream(of: Void.self)
        let loop = Task {
            await repeatUntilShutdown(every: .seconds(1), logger: log.logger(level: .warning), failure: "failed", stopBound: .milliseconds(300)) {
                didStart.yield()
                // Never resumed, and deaf to cancellation: what a stranded PostgresNIO await looks like.
                await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
                return false
            }
        }
        for await _ in started { break }
        let stop = ContinuousClock.now
        loop.cancel()
        try await abandoning(after: 10) { await loop.value }
        #expect(ContinuousClock.now - stop < .seconds(5))
        #expect(log.unexpected(allowing: []).map(\.description).contains { $0.contains("abandoned") })

        // Work that ends soon after the stop (a record of what was sent) is waited for, and nothing is logged.
        let quiet = ServerLog()
        let (begun, didBegin) = AsyncStream.makeStream(of: Void.self)
        let finished = Atomic(false)
        let second = Task {
            await repeatUntilShutdown(every: .seconds(1), logger: quiet.logger(level: .warning), failure: "failed", stopBound: .seconds(5)) {
                didBegin.yield()
                try? await Task.sleep(for: .seconds(60))  // cut short by the stop
                try await Task { try await Task.sleep(for: .milliseconds(200)) }.value
                finished.store(true, ordering: .sequentiallyConsistent)
                return false
            }
        }
        for await _ in begun { break }
        second.cancel()
        try await abandoning(after: 10) { await second.value }
        let didFinish = finished.load(ordering: .sequentiallyConsistent)
        #expect(didFinish)
        #expect(quiet.unexpected(allowing: []).isEmpty)
    }
}
