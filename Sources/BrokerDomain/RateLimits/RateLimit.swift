/// One budget: bursts of up to `capacity` requests, refilled evenly at `capacity` per `period`.
package struct RateLimit: Sendable, Equatable {
    package var capacity: Int
    package var period: Duration

    package init(capacity: Int, period: Duration) {
        precondition(capacity >= 1 && period > .zero, "a rate limit admits at least one request per positive period")
        (self.capacity, self.period) = (capacity, period)
    }

    package static func perMinute(_ capacity: Int) -> RateLimit { RateLimit(capacity: capacity, period: .seconds(60)) }
    package static func perHour(_ capacity: Int) -> RateLimit { RateLimit(capacity: capacity, period: .seconds(3600)) }

    /// The time one request's token takes to grow back, in whole microseconds (the buckets' resolution in
    /// the database), rounded up: `capacity` requests never take less than the period to grow back.
    var intervalMicroseconds: Int64 {
        let (seconds, attoseconds) = period.components
        let periodMicroseconds = seconds * 1_000_000 + (attoseconds + 999_999_999_999) / 1_000_000_000_000
        return (periodMicroseconds + Int64(capacity) - 1) / Int64(capacity)
    }

    /// "120 per minute", for problem details.
    package var description: String {
        switch period {
        case .seconds(60): "\(capacity) per minute"
        case .seconds(3600): "\(capacity) per hour"
        default: "\(capacity) per \(period.components.seconds) seconds"
        }
    }
}
