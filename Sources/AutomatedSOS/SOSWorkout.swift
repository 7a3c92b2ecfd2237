import Foundation

/// A workout of any kind (cycling, swimming, rowing, yoga …): the person chose to exert themselves from
/// `start` for `duration` seconds. The kind does not matter to the monitor: during a workout and its
/// recovery a fast heart (or a low oxygen saturation from motion) is expected, whatever the sport, and
/// many sports (cycling, swimming) record no steps at all.
///
/// In a trace it is the line `workout,<minutes>,<start>`; a workout still in progress can be sent with its
/// duration so far and sent again with the same start as it goes on: the later line extends the earlier.
public struct SOSWorkout: Sendable, Hashable, Codable {
    public var start: Date
    /// Seconds.
    public var duration: TimeInterval

    public init(start: Date, duration: TimeInterval) {
        self.start = start
        self.duration = duration
    }

    public var end: Date { start.addingTimeInterval(duration) }

    /// Longer than a day is not a workout but a recording error; the monitor ignores it (and zero or negative).
    static let plausibleDuration: ClosedRange<TimeInterval> = 1...86_400
}
