import Foundation
import Logging
import PostgresNIO

/// One line of a run's results: a finisher's rank and time, or a runner who did not finish.
package struct RunResult: Sendable, Equatable {
    package var rank: Int?
    package var bib: Int
    package var name: String
    package var seconds: Double?

    /// Finishers by time (ties share a rank); non-finishers after them by bib, once the run is over.
    static func ranking(of runners: [RunParticipant], startedAt: Date, over: Bool) -> [RunResult] {
        let finishers = runners.compactMap { runner in runner.finishedAt.map { (runner, $0.timeIntervalSince(startedAt)) } }
            .sorted { ($0.1, $0.0.bib) < ($1.1, $1.0.bib) }
        var results: [RunResult] = []
        for (index, (runner, seconds)) in finishers.enumerated() {
            let rank = index > 0 && results[index - 1].seconds == seconds ? results[index - 1].rank : index + 1
            results.append(RunResult(rank: rank, bib: runner.bib, name: runner.publicName, seconds: seconds))
        }
        guard over else { return results }
        return results + runners.filter { $0.finishedAt == nil }.map { RunResult(rank: nil, bib: $0.bib, name: $0.publicName, seconds: nil) }
    }
}
