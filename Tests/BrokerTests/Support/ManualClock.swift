import Synchronization

/// A clock a test moves by hand, for code that reads the time through `() -> ContinuousClock.Instant`:
/// refill is checked by advancing it, never by sleeping.
final class ManualClock: Sendable {
    private let start = ContinuousClock.now
    private let elapsed = Mutex<Duration>(.zero)

    var now: ContinuousClock.Instant { start + elapsed.withLock { $0 } }

    func advance(by duration: Duration) {
        elapsed.withLock { $0 += duration }
    }
}
