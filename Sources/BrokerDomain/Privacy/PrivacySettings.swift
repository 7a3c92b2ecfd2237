/// The privacy budget's parameters (`PRIVACY_*` in the README; the reasoning behind each default is in
/// docs/privacy.md). None of them can turn the noise off: a cell's loss is capped at `maximumCellLoss`.
package struct PrivacySettings: Sendable, Equatable {
    /// `PRIVACY_CELL_RHO`: what one released cell costs when a request does not say (ρ per cell).
    package var defaultCellLoss = 0.01
    /// `PRIVACY_COMPANY_BUDGET` ρ per `PRIVACY_COMPANY_PERIOD_DAYS` rolling days, per company.
    package var companyBudget = 3.0
    package var companyPeriodDays = 30
    /// `PRIVACY_PERSON_BUDGET`: each person's cap over the last twelve calendar months, across every company
    /// and peer statistics together. A person whose group releases would pass it is left out of them.
    package var personBudget = 2.0
    /// The part of the person's cap set aside for peer statistics, whatever they upload: every closed month
    /// publishes one peer cell per type, and a person can be in all of them.
    package var peerReserve = 0.5
    /// `PRIVACY_COMPANY_SHARE`: the fraction of each person's yearly group cap (`personGroupBudget`) that one
    /// company may take over the same twelve calendar months. Below 1 so that one company cannot spend a
    /// person's whole year and leave every other company's requests without them; a third by default.
    package var companyShare = 1.0 / 3.0
    /// `GROUP_RESULTS_LATENESS`: hours after the last time zone's day ends before a subscription's bucket is
    /// released, so uploads that arrive late (a phone synced the next morning) are in it.
    package var latenessHours = 24
    /// The most cells one release may hold: it bounds what one release can cost and what it can describe.
    package var maximumCellsPerRelease = 400

    /// What a request may ask one cell to cost: below the floor the figures are all noise; above the cap a
    /// single cell would take a large part of a person's year.
    package static let cellLossRange: ClosedRange<Double> = 0.001...0.1

    package init() {}

    /// What one peer cell costs: a per-month, per-type share of the reserve (never below a millionth), over
    /// every month that can be published in any 366 days. At the default reserve ρ ≈ 0.00196.
    package var peerCellLoss: PrivacyLoss {
        PrivacyLoss(micro: max(1, PrivacyLoss(rho: peerReserve).micro / Int64(Self.peerMonthsPerYear * SampleType.allCases.count)))
    }

    /// How many months' peer cells any 366 days can publish: a month is published once, after it closes
    /// (`ReleaseSchedule`), and only within `PeerStatistics.horizonMonths` of the newest closed month. Any
    /// 366 days hold at most 13 closings (one a month, and 366 days can reach the same day of the month a
    /// year on); a new server's first step can also publish up to the horizon's months at once. 13 + 2.
    static var peerMonthsPerYear: Int { 13 + PeerStatistics.horizonMonths }

    /// What group releases may take from one person in twelve months.
    var personGroupBudget: PrivacyLoss { PrivacyLoss(rho: personBudget) - PrivacyLoss(rho: peerReserve) }

    /// What one company may take from one person in twelve months: `companyShare` of `personGroupBudget`,
    /// to the nearest millionth (the share is a fraction as configured; a third of 1.5 is 0.5, not a
    /// millionth less through binary rounding). Never more than the cap itself.
    var companyShareLoss: PrivacyLoss {
        PrivacyLoss(micro: min(personGroupBudget.micro, Int64((Double(personGroupBudget.micro) * companyShare).rounded())))
    }

    package var companyShareRho: Double { companyShareLoss.rho }
    package var personGroupBudgetRho: Double { personGroupBudget.rho }

    /// The cheapest request there can be: one cell and the cohort's size, at the lowest ρ per cell.
    static var cheapestRequest: PrivacyLoss { PrivacyLoss(rho: cellLossRange.lowerBound) * 2 }
    package static var cheapestRequestRho: Double { cheapestRequest.rho }
    /// Whether one company's share leaves room for any request at all (else every one would be a 422).
    package var companyShareFitsTheCheapestRequest: Bool { companyShareLoss >= Self.cheapestRequest }

    /// The most buckets of `types` one release may hold: within `maximumCellsPerRelease`, and cheap enough,
    /// with the cohort's size, for a person untouched by this company to be in it: a release dearer than
    /// one company's share of a person's cap would leave everyone out. At least one.
    func bucketsPerRelease(types: Int, cellLoss: PrivacyLoss) -> Int {
        let affordable = Int(companyShareLoss.micro / max(1, cellLoss.micro)) - 1
        return max(1, min(maximumCellsPerRelease, affordable) / max(1, types))
    }
}
