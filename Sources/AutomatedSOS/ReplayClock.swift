import Foundation
import Synchronization

/// The trace's time: it only moves forward (a late sample does not turn it back), jumping at once, or
/// sleeping `1 / speed` of each gap in real time.
final class ReplayClock: SOSClock {
    private let current: Mutex<Date>
    private let speed: Double?

    init(start: Date, speed: Double?) {
        current = Mutex(start)
        self.speed = speed
    }

    var now: Date { current.withLock { $0 } }

    func sleep(until deadline: Date) async throws {
        let gap = deadline.timeIntervalSince(now)
        guard gap > 0 else { return }
        if let speed, speed > 0 { try await Task.sleep(for: .seconds(gap / speed)) }
        current.withLock { $0 = max($0, deadline) }
    }
}
