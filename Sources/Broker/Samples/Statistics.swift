import Foundation

/// `GET /v1/me/statistics`: the person's own buckets and, when enough peers exist, theirs.
public struct Statistics: Sendable, Equatable {
    public enum Bucket: String, Sendable, CaseIterable { case day, week, month }

    /// The person's own figures for one bucket of their local days, under the type's aggregation: for a
    /// daily-total type `mean`/`min`/`max` are over daily totals and `total` is the bucket's sum.
    public struct OwnBucket: Sendable, Equatable {
        public var start: CalendarDate
        /// Samples in the bucket.
        public var count: Int
        /// Days of the bucket with data.
        public var days: Int
        public var mean, min, max: Double
        public var total: Double?
    }

    public struct PeerBucket: Sendable, Equatable {
        public var start: CalendarDate
        public var people: Int
        public var mean, p10, p50, p90: Double
    }

    /// The peer group: people of the caller's sex and ten-year age band, the caller excluded.
    public struct PeerGroup: Sendable, Equatable {
        public var sex: Sex
        public var ageFrom: Int
        public var ageTo: Int
        public var name: String { "\(sex == .female ? "women" : "men") aged \(ageFrom)–\(ageTo)" }

        /// The band of someone born on `birthDate`, as of `today`.
        public init(sex: Sex, birthDate: CalendarDate, today: CalendarDate) {
            var age = today.year - birthDate.year
            if (today.month, today.day) < (birthDate.month, birthDate.day) { age -= 1 }
            self.sex = sex
            self.ageFrom = max(0, age / 10 * 10)
            self.ageTo = ageFrom + 9
        }

        /// Birth dates of people whose age today is within the band: (born after, born on or before].
        /// Someone is at least A years old when born on or before this day A years ago.
        public func birthDates(today: CalendarDate) -> (after: CalendarDate, onOrBefore: CalendarDate) {
            (today.yearsAgo(ageTo + 1), today.yearsAgo(ageFrom))
        }
    }

    public var type: SampleType
    /// The zone of the days: the person's, or UTC while it is not known.
    public var timeZone: String
    public var bucket: Bucket
    public var own: [OwnBucket]
    public var group: PeerGroup
    /// False when fewer than `GROUP_MIN_COHORT` peers have data of this type in the window.
    public var peersAvailable: Bool
    /// Only buckets to which at least `GROUP_MIN_COHORT` peers contribute.
    public var peerBuckets: [PeerBucket]
}

extension CalendarDate {
    /// The same day `years` years earlier; 29 February becomes 28 February in a common year, so that
    /// someone born on 29 February turns a year older on 1 March, as `PeerGroup.init` counts it.
    func yearsAgo(_ years: Int) -> CalendarDate {
        let year = self.year - years
        return CalendarDate(year: year, month: month, day: min(day, CalendarDate.numberOfDays(inMonth: month, year: year)))!
    }
}
