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
}
