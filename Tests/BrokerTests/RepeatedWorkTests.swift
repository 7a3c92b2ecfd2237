import Foundation
import Logging
import Synchronization
import Testing

@testable import Broker

/// The background loops' shape (`repeatUntilShutdown`): a failure is a warning, the server stopping is not.
@Suite("Repeated work")
struct RepeatedWorkTests {
    /// What a loop logged, for the test to read.
    final class Records: Sendable {
        let lines = Mutex<[(Logger.Level, String)]>([])
    }

    struct CapturingHandler: LogHandler {
        let records: Records
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(
            level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt
        ) {
            records.lines.withLock { $0.append((level, "\(message)")) }
        }
    }

    struct Refused: Error {}

    /// Runs a loop whose work `work`, waits until it has started `starts` times, then cancels it as a graceful
    /// shutdown does; returns what it logged.
    private func run(starts: Int, _ work: @escaping @Sendable (Int) async throws -> Bool) async throws -> [(Logger.Level, String)] {
        let records = Records()
        let logger = Logger(label: "test") { _ in CapturingHandler(records: records) }
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
        return records.lines.withLock { $0 }
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
        #expect(lines.first?.0 == .warning)
        #expect(lines.first?.1 == "the work failed; will retry")
    }
}
