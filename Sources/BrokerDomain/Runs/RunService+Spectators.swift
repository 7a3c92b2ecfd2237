import Foundation
import Logging

/// What spectators see (R49–R51): no sign-in, runners by bib (beside any display name) only, positions only while the
/// run is live, never inside a runner's privacy zone's hidden area (`PrivacyZone`).
extension RunService {
    package struct LiveSnapshot: Sendable, Equatable {
        package var run: Run
        package var state: Run.State
        package var runners: [LiveRunner]

        /// The newest position shown (the run's start when none is): what `at` says, so a snapshot changes
        /// only when something in it does.
        package var newest: Date { runners.map(\.at).max() ?? run.startsAt }
    }

    package func live(id: UUID, logger: Logger) async throws -> LiveSnapshot {
        try await client.withConnection { connection in
            guard let run = try await RunStore.run(id: id, on: connection, logger: logger) else { throw RunError.notFound }
            let now = clock.now
            let state = run.state(at: now)
            // After the run the public page shows the path and the results, not tracks.
            let runners =
                state == .live ? try await RunStore.liveRunners(run: id, during: run.startsAt...run.endsAt, on: connection, logger: logger) : []
            // A runner inside their zone's hidden area is not shown at all (not even where they were before).
            return LiveSnapshot(run: run, state: state, runners: runners.filter { !($0.zone?.hides($0.runner.point) ?? false) }.map(\.runner))
        }
    }
}
