import Foundation

/// A third party's request for anonymised statistics about a population.
package struct GroupRequest: Sendable, Equatable {
    package enum Status: String, Sendable { case accepted, refused }
    /// `cohort_too_similar` only on requests from before differential privacy replaced the similarity check.
    package enum RefusalReason: String, Sendable {
        case cohortBelowThreshold = "cohort_below_threshold"
        case cohortTooSimilar = "cohort_too_similar"
    }

    /// Bounds on each person's mean of `type` over the window; both nil only requires data of that type.
    package struct Filter: Sendable, Equatable, Codable {
        package var type: SampleType
        package var min: Double?
        package var max: Double?
        package init(type: SampleType, min: Double?, max: Double?) { (self.type, self.min, self.max) = (type, min, max) }
    }

    package struct Demographics: Sendable, Equatable {
        package var ageMin: Int?
        package var ageMax: Int?
        package var sex: Sex?

        package init(ageMin: Int?, ageMax: Int?, sex: Sex?) { (self.ageMin, self.ageMax, self.sex) = (ageMin, ageMax, sex) }

        var isEmpty: Bool { ageMin == nil && ageMax == nil && sex == nil }
    }

    package struct Subscription: Sendable, Equatable {
        package enum Status: String, Sendable { case active, ended, expired }
        package var days: Int
        package var status: Status
        package var endsAt: Date?
        package var endedAt: Date?
    }

    package var id: UUID
    package var thirdParty: SingleRequest.ThirdParty
    package var types: [SampleType]
    package var filters: [Filter]
    package var demographics: Demographics
    package var windowFrom: CalendarDate
    package var windowTo: CalendarDate
    package var bucket: Statistics.Bucket
    package var purpose: String
    package var status: Status
    package var refusalReason: RefusalReason?
    /// The cohort's size as released: a noisy count.
    package var cohortSize: Int?
    package var createdAt: Date
    package var subscription: Subscription?

    /// What one released cell of this request costs (nil for requests from before differential privacy).
    package var cellLoss: PrivacyLoss?
    /// A subscription's last released bucket start.
    var releasedThrough: CalendarDate?
}

/// One cell of released results: the distribution across people of their own figures in one bucket,
/// with differential-privacy noise (`CellMechanism`), as released once and stored.
package struct GroupResultCell: Sendable, Equatable, Codable {
    package var bucketStart: String
    package var type: SampleType
    /// Nil when suppressed (the noisy count below k): nothing else about such a cell is released.
    package var people: Int?
    package var mean: Double?
    package var p10: Double?
    package var p50: Double?
    package var p90: Double?
    package var suppressed: Bool
    /// How much noise the figures carry (nil only in releases from before differential privacy).
    package var accuracy: CellAccuracy?

    package init(bucketStart: String, type: SampleType, people: Int?, mean: Double?, p10: Double?, p50: Double?, p90: Double?, suppressed: Bool) {
        (self.bucketStart, self.type, self.people, self.mean) = (bucketStart, type, people, mean)
        (self.p10, self.p50, self.p90, self.suppressed) = (p10, p50, p90, suppressed)
    }
}

/// The noise scales of a released cell, all data-independent except `meanMargin95`, which is computed
/// from the released (noisy) figures themselves.
package struct CellAccuracy: Sendable, Equatable, Codable {
    /// Standard deviation of the noise on `people`.
    package var peopleStdDev: Double
    /// Standard deviation of the noise on the sum behind `mean`, in the type's unit.
    package var sumStdDev: Double
    /// Standard deviation of the noise on each histogram bin (people), and the bins' width (unit).
    package var binStdDev: Double
    package var binWidth: Double
    /// Half the width of the 95 % interval around `mean` (nil when suppressed).
    package var meanMargin95: Double?
    /// The privacy loss (ρ, zero-concentrated DP) the cell cost.
    package var rho: Double

    init(_ calibration: CellCalibration) {
        peopleStdDev = calibration.countStandardDeviation.rounded(toMultipleOf: 0.01)
        sumStdDev = calibration.sumStandardDeviation.rounded(toMultipleOf: 0.01)
        binStdDev = calibration.binStandardDeviation.rounded(toMultipleOf: 0.01)
        binWidth = calibration.bounds.binWidth
        rho = calibration.loss.rho
    }
}

/// What was released, when.
package struct GroupRelease: Sendable, Equatable {
    package var releasedAt: Date
    package var cells: [GroupResultCell]
}
