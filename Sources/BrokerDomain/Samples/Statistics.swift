import Foundation

/// `GET /v1/me/statistics`: the person's own buckets and, when enough peers exist, theirs.
package struct Statistics: Sendable, Equatable {
    package enum Bucket: String, Sendable, CaseIterable {
        case day, week, month

        /// The longest window (days from `from` to `to`, both counted) a request with these buckets may ask
        /// for: about 400 buckets of days or weeks, ten years of months. Ten years of day buckets was 3,660
        /// buckets of own and peer figures from one cheap request.
        package var maximumWindowDays: Int {
            switch self {
            case .day: 400
            case .week: 2800
            case .month: 3661
            }
        }
    }

    /// The person's own figures for one bucket of their local days, under the type's aggregation: for a
    /// daily-total type `mean`/`min`/`max` are over daily totals and `total` is the bucket's sum.
    package struct OwnBucket: Sendable, Equatable {
        package var start: CalendarDate
        /// Samples in the bucket.
        package var count: Int
        /// Days of the bucket with data.
        package var days: Int
        package var mean, min, max: Double
        package var total: Double?
    }

    /// Peers' figures for one bucket: those of the stored noisy cell of the caller's band for the calendar
    /// month holding the bucket's start (`PeerStatistics`), so the buckets of one month carry the same
    /// figures. Each percentile is there only when its 95 % margin meets the type's accuracy target
    /// (`PeerAccuracyTarget`).
    package struct PeerBucket: Sendable, Equatable {
        package var start: CalendarDate
        /// The first day of the month the figures describe.
        package var month: CalendarDate
        /// Noisy: the peers with data that month.
        package var people: Int
        /// Half the width of the 95 % interval the noise leaves around `people`.
        package var peopleMargin95: Double
        /// Peers' month figures' percentiles, each with half the width of its 95 % interval (nil together).
        package var p10, p50, p90: Double?
        package var p10Margin95, p50Margin95, p90Margin95: Double?

        package init(
            start: CalendarDate, month: CalendarDate, people: Int, peopleMargin95: Double, p10: Double?, p50: Double?, p90: Double?,
            p10Margin95: Double? = nil, p50Margin95: Double? = nil, p90Margin95: Double? = nil
        ) {
            (self.start, self.month, self.people, self.peopleMargin95) = (start, month, people, peopleMargin95)
            (self.p10, self.p50, self.p90) = (p10, p50, p90)
            (self.p10Margin95, self.p50Margin95, self.p90Margin95) = (p10Margin95, p50Margin95, p90Margin95)
        }
    }

    /// The peer group: people of the caller's sex and ten-year age band (the caller too: the cells are the
    /// same for everyone in it).
    package struct PeerGroup: Sendable, Equatable {
        package var sex: Sex
        package var ageFrom: Int
        package var ageTo: Int
        package var name: String { "\(sex == .female ? "women" : "men") aged \(ageFrom)–\(ageTo)" }

        /// The band of someone born on `birthDate`, as of `today`.
        package init(sex: Sex, birthDate: CalendarDate, today: CalendarDate) {
            var age = today.year - birthDate.year
            if (today.month, today.day) < (birthDate.month, birthDate.day) { age -= 1 }
            self.sex = sex
            self.ageFrom = max(0, age / 10 * 10)
            self.ageTo = ageFrom + 9
        }

        /// Birth dates of people whose age today is within the band: (born after, born on or before].
        /// Someone is at least A years old when born on or before this day A years ago.
        package func birthDates(today: CalendarDate) -> (after: CalendarDate, onOrBefore: CalendarDate) {
            (today.yearsAgo(ageTo + 1), today.yearsAgo(ageFrom))
        }
    }

    package var type: SampleType
    /// The zone of the days: the person's, or UTC while it is not known.
    package var timeZone: String
    package var bucket: Bucket
    package var own: [OwnBucket]
    package var group: PeerGroup
    /// True when some bucket is shown.
    package var peersAvailable: Bool
    /// Only buckets whose month's noisy count of peers reaches `GROUP_MIN_COHORT`.
    package var peerBuckets: [PeerBucket]
}

extension CalendarDate {
    /// The same day `years` years earlier; 29 February becomes 28 February in a common year, so that
    /// someone born on 29 February turns a year older on 1 March, as `PeerGroup.init` counts it.
    func yearsAgo(_ years: Int) -> CalendarDate {
        let year = self.year - years
        return CalendarDate(year: year, month: month, day: min(day, CalendarDate.numberOfDays(inMonth: month, year: year)))!
    }
}
