import Foundation

/// A third party's request for anonymised statistics about a population.
public struct GroupRequest: Sendable, Equatable {
    public enum Status: String, Sendable { case accepted, refused }
    public enum RefusalReason: String, Sendable { case cohortBelowThreshold = "cohort_below_threshold", cohortTooSimilar = "cohort_too_similar" }

    /// Bounds on each person's mean of `type` over the window; both nil only requires data of that type.
    public struct Filter: Sendable, Equatable, Codable {
        public var type: SampleType
        public var min: Double?
        public var max: Double?
        public init(type: SampleType, min: Double?, max: Double?) { (self.type, self.min, self.max) = (type, min, max) }
    }

    public struct Demographics: Sendable, Equatable {
        public var ageMin: Int?
        public var ageMax: Int?
        public var sex: Sex?

        public init(ageMin: Int?, ageMax: Int?, sex: Sex?) { (self.ageMin, self.ageMax, self.sex) = (ageMin, ageMax, sex) }

        var isEmpty: Bool { ageMin == nil && ageMax == nil && sex == nil }
    }

    public struct Subscription: Sendable, Equatable {
        public enum Status: String, Sendable { case active, ended, expired }
        public var days: Int
        public var status: Status
        public var endsAt: Date?
        public var endedAt: Date?
    }

    public var id: UUID
    public var thirdParty: SingleRequest.ThirdParty
    public var types: [SampleType]
    public var filters: [Filter]
    public var demographics: Demographics
    public var windowFrom: CalendarDate
    public var windowTo: CalendarDate
    public var bucket: Statistics.Bucket
    public var purpose: String
    public var status: Status
    public var refusalReason: RefusalReason?
    public var cohortSize: Int?
    public var createdAt: Date
    public var subscription: Subscription?

    /// The last day results cover: the window's end, or for a live subscription today (and for an ended or
    /// expired one the day it stopped), whichever is later.
    func lastResultDay(today: CalendarDate) -> CalendarDate {
        guard let subscription else { return windowTo }
        let stop: CalendarDate
        switch subscription.status {
        case .active: stop = today
        case .ended: stop = subscription.endedAt.map { CalendarDate($0, in: .utc) } ?? today
        case .expired: stop = subscription.endsAt.map { CalendarDate($0, in: .utc) } ?? today
        }
        return max(windowTo, stop)
    }
}

/// One cell of released results: the distribution across people of their own means in one bucket.
public struct GroupResultCell: Sendable, Equatable, Codable {
    public var bucketStart: String
    public var type: SampleType
    /// Nil when suppressed (fewer than k contributors): nothing about a small cell is released.
    public var people: Int?
    public var mean: Double?
    public var p10: Double?
    public var p50: Double?
    public var p90: Double?
    public var suppressed: Bool

    public init(bucketStart: String, type: SampleType, people: Int?, mean: Double?, p10: Double?, p50: Double?, p90: Double?, suppressed: Bool) {
        (self.bucketStart, self.type, self.people, self.mean) = (bucketStart, type, people, mean)
        (self.p10, self.p50, self.p90, self.suppressed) = (p10, p50, p90, suppressed)
    }
}

extension [GroupResultCell] {
    /// The same cells with the same figures, up to floating-point noise: PostgreSQL may sum a bucket's
    /// means in another order from one computation to the next, and a change in the last bits is not new
    /// results (it would be a release, a webhook and access-log entries for nothing).
    func hasSameFigures(as other: [GroupResultCell]) -> Bool {
        func close(_ a: Double?, _ b: Double?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case let (a?, b?): abs(a - b) <= 1e-9 * Swift.max(1, abs(a), abs(b))
            default: false
            }
        }
        return count == other.count && zip(self, other).allSatisfy { a, b in
            a.bucketStart == b.bucketStart && a.type == b.type && a.people == b.people && a.suppressed == b.suppressed
                && close(a.mean, b.mean) && close(a.p10, b.p10) && close(a.p50, b.p50) && close(a.p90, b.p90)
        }
    }
}

/// What was released, when.
public struct GroupRelease: Sendable, Equatable {
    public var releasedAt: Date
    public var cells: [GroupResultCell]
}
