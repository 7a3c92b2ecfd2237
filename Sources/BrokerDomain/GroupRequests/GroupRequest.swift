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
    /// The purpose's code; `purpose` is the sender's own words.
    package var purposeCode: PurposeOfUse
}
