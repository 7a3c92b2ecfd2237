import Foundation
import Logging
import ServiceLifecycle

/// Publishes peer statistics' closed months in the background (`PeerStatistics`): each step the newest
/// closed month of the last `PeerStatistics.horizonMonths` not yet published, one month per step, until none
/// is left; then it looks again every `interval`. So a month's cells are there soon after it closes, before
/// anyone's page needs them, and a new server catches up on the last two closed months, newest first.
///
/// Cost: one query per type over one month's rollups (the `(type, day)` index) and one insert per month.
/// Two instances share the work: a month's lock makes the second wait, then find it done.
package struct PeerStatisticsPublishing: Service {
    package init(peers: PeerStatistics, interval: Duration?, logger: Logger, clock: WallClock = .system) {
        self.clock = clock
        self.peers = peers
        self.interval = interval
        self.logger = logger
    }

    let peers: PeerStatistics
    /// `PEER_STATISTICS_INTERVAL`; nil turns the loop off (requests still publish what they need).
    let interval: Duration?
    let logger: Logger
    /// Which months have closed.
    let clock: WallClock

    package func run() async throws {
        // Off: wait for shutdown all the same, since a service that returns ends the whole server.
        guard let interval else { return try await gracefulShutdown() }
        let peers = peers
        let logger = logger
        let clock = clock
        await repeatUntilShutdown(every: interval, logger: logger, failure: "publishing peer statistics failed; will retry") {
            try await peers.publishNewestMissingMonth(at: clock.now, logger: logger)
        }
    }
}
