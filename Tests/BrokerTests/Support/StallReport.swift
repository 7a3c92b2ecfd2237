import Foundation
import Synchronization
import Testing

/// Names the step a test is stuck in, while it is stuck.
///
/// A fresh-clone run of the whole suite has stopped for good, more than once, with every thread idle and
/// a few harness tests never returning; a debugger shows idle threads only (a suspended task has no
/// stack), and the run then sits until CI's time limit. So the harness marks its steps here (creating the
/// database, starting the server, the test's body, shutting down, each direct SQL statement), and a
/// step that has not ended after `threshold` is written to standard error once, with the test's name,
/// while the run goes on. The report is evidence for finding the cause; it passes or fails nothing.
enum StallReport {
    /// Longer than any step of a healthy run under the whole suite on two cores takes
    /// (`D4H_TEST_STALL_SECONDS`, to see the report work).
    static let threshold: Duration = .seconds(
        ProcessInfo.processInfo.environment["D4H_TEST_STALL_SECONDS"].flatMap { Double($0) } ?? 240)

    private struct Step {
        let test: String
        let step: String
        let since: ContinuousClock.Instant
        var reported = false
    }

    private static let steps = Mutex<[UUID: Step]>([:])
    private static let watcher = Mutex<Task<Void, Never>?>(nil)

    /// Runs `body` as a named step of the current test.
    static func step<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
        let id = UUID()
        let test = Test.current?.displayName ?? Test.current?.name ?? "(no test)"
        steps.withLock { $0[id] = Step(test: test, step: name, since: .now) }
        startWatching()
        defer { _ = steps.withLock { $0.removeValue(forKey: id) } }
        return try await body()
    }

    private static func startWatching() {
        watcher.withLock { task in
            guard task == nil else { return }
            task = Task.detached {
                while true {
                    try? await Task.sleep(for: min(.seconds(30), threshold / 2))
                    reportStalled()
                }
            }
        }
    }

    private static func reportStalled() {
        let now = ContinuousClock.now
        let stalled = steps.withLock { steps -> [Step] in
            var found: [Step] = []
            for (id, step) in steps where !step.reported && now - step.since > threshold {
                steps[id]?.reported = true
                found.append(step)
            }
            return found
        }
        for step in stalled {
            let message = "STALLED: test \"\(step.test)\" has been in step \"\(step.step)\" for \(now - step.since)\n"
            FileHandle.standardError.write(Data(message.utf8))
        }
    }
}
