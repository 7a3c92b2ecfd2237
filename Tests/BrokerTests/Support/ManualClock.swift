import Foundation
import Synchronization

@testable import BrokerDomain

/// A clock a test moves by hand, for code that reads the time through `() -> ContinuousClock.Instant`
/// (rate limits) or through a `WallClock` (`wall`, for `BrokerConfiguration.clock`): time passes by
/// advancing it, never by sleeping.
final class ManualClock: Sendable {
    private let start = ContinuousClock.now
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

    func advance(by duration: Duration) {
        elapsed.withLock { $0 += duration }
    }
}
