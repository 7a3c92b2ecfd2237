import Logging
import ServiceLifecycle

/// Runs the run's day (`RunService+Schedule`) every `interval`: requests, removal at the start, progress,
/// and requests ending with their runs.
package struct RunDay: Service {
    package init(runs: RunService, logger: Logger, interval: Duration) {
        self.runs = runs
        self.logger = logger
        self.interval = interval
    }

    let runs: RunService
    let logger: Logger
    var interval: Duration

    package func run() async throws {
        let runs = runs
        let logger = logger
        await repeatUntilShutdown(every: interval, logger: logger, failure: "a pass of the runs' day failed; will retry") {
            let sent = try await runs.sendDueRequests(logger: logger)
            let removed = try await runs.removeAbsentees(logger: logger)
            let finished = try await runs.trackProgress(logger: logger)
            let ended = try await runs.endRequestsWithTheirRuns(logger: logger)
            return sent + removed + finished + ended > 0
        }
    }
}
