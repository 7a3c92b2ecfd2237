import Foundation

/// A third party's request for anonymised statistics about a population.
public struct GroupRequest: Sendable, Equatable {
    public enum Status: String, Sendable { case accepted, refused }
    /// `cohort_too_similar` only on requests from before differential privacy replaced the similarity check.
    public enum RefusalReason: String, Sendable {
        case cohortBelowThreshold = "cohort_below_threshold"
        case cohortTooSimilar = "cohort_too_similar"
    }

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
    /// The cohort's size as released: a noisy count.
    public var cohortSize: Int?
    public var createdAt: Date
    public var subscription: Subscription?

    /// What one released cell of this request costs (nil for requests from before differential privacy).
    var cellLoss: PrivacyLoss?
    /// A subscription's last released bucket start.
    var releasedThrough: CalendarDate?
}

/// One cell of released results: the distribution across people of their own figures in one bucket,
/// with differential-privacy noise (`CellMechanism`), as released once and stored.
public struct GroupResultCell: Sendable, Equatable, Codable {
    public var bucketStart: String
    public var type: SampleType
    /// Nil when suppressed (the noisy count below k): nothing else about such a cell is released.
    public var people: Int?
    public var mean: Double?
    public var p10: Double?
    public var p50: Double?
    public var p90: Double?
    public var suppressed: Bool
    /// How much noise the figures carry (nil only in releases from before differential privacy).
    public var accuracy: CellAccuracy?

    public init(bucketStart: String, type: SampleType, people: Int?, mean: Double?, p10: Double?, p50: Double?, p90: Double?, suppressed: Bool) {
        (self.bucketStart, self.type, self.people, self.mean) = (bucketStart, type, people, mean)
        (self.p10, self.p50, self.p90, self.suppressed) = (p10, p50, p90, suppressed)
    }
}

/// The noise scales of a released cell, all data-independent except `meanMargin95`, which is computed
/// from the released (noisy) figures themselves.
public struct CellAccuracy: Sendable, Equatable, Codable {
    /// Standard deviation of the noise on `people`.
    public var peopleStdDev: Double
    /// Standard deviation of the noise on the sum behind `mean`, in the type's unit.
    public var sumStdDev: Double
    /// Standard deviation of the noise on each histogram bin (people), and the bins' width (unit).
    public var binStdDev: Double
    public var binWidth: Double
    /// Half the width of the 95 % interval around `mean` (nil when suppressed).
    public var meanMargin95: Double?
    /// The privacy loss (ρ, zero-concentrated DP) the cell cost.
    public var rho: Double

    init(_ calibration: CellCalibration) {
        peopleStdDev = calibration.countStandardDeviation.rounded(toMultipleOf: 0.01)
        sumStdDev = calibration.sumStandardDeviation.rounded(toMultipleOf: 0.01)
        binStdDev = calibration.binStandardDeviation.rounded(toMultipleOf: 0.01)
        binWidth = calibration.bounds.binWidth
        rho = calibration.loss.rho
    }
}

/// What was released, when.
public struct GroupRelease: Sendable, Equatable {
    public var releasedAt: Date
    public var cells: [GroupResultCell]
}
