import Foundation
import Synchronization

@testable import BrokerDomain

/// A clock a test moves by hand, for code that reads the time through `() -> ContinuousClock.Instant`
/// or through a `WallClock` (`wall`, for `BrokerConfiguration.clock`; `standingWall`, for the rate limits):
/// time passes by advancing it, never by sleeping.
final class ManualClock: Sendable {
    private let start = ContinuousClock.now
    /// `standingWall`'s start: now, to the whole second, so that instants a test advances by whole
    /// milliseconds stay whole microseconds (the database's resolution) through `Date`'s `Double`.
    private let startDate = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    private let elapsed = Mutex<Duration>(.zero)

    var now: ContinuousClock.Instant { start + elapsed.withLock { $0 } }

    /// The server's wall clock: the system's time plus however far the test advanced this clock. It runs
    /// with the system's rather than standing still, because the database's `now()` does: a test that
    /// moves a run's start in SQL and the clock by hand keeps the two in step where it did not advance.
    var wall: WallClock {
        WallClock { [self] in
            let offset = elapsed.withLock { $0 }
            return Date().addingTimeInterval(Double(offset.components.seconds) + Double(offset.components.attoseconds) * 1e-18)
        }
    }

    /// A wall clock that stands still but for `advance`: `startDate` plus however far the test advanced
    /// this clock. The rate limits' buckets are instants shared through the database (`RateLimits.clock`); a
    /// test that expects an exact `Retry-After` needs a time that does not move between two requests.
    var standingWall: WallClock {
        WallClock { [self] in
            let offset = elapsed.withLock { $0 }
            return startDate.addingTimeInterval(Double(offset.components.seconds) + Double(offset.components.attoseconds) * 1e-18)
        }
    }

    func advance(by duration: Duration) {
        elapsed.withLock { $0 += duration }
    }
}
