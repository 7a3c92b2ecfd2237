/// The noise scales of a released cell, all data-independent except the margins, which are computed from
/// the released (noisy) figures themselves.
package struct CellAccuracy: Sendable, Equatable, Codable {
    /// Standard deviation of the noise on `people`.
    package var peopleStdDev: Double
    /// Standard deviation of the noise on the sum behind `mean`, in the type's unit.
    package var sumStdDev: Double
    /// What each percentile's exponential mechanism cost (ρ), and the spacing of its candidates (unit). Nil in
    /// releases from before issue 32, whose percentiles were read from a noisy histogram.
    package var percentileRho: Double?
    package var percentileStep: Double?
    /// Those earlier releases' histogram: the noise on each bin (people) and the bins' width. Kept so that a
    /// stored release reads back exactly as it was released; nil since.
    package var binStdDev: Double?
    package var binWidth: Double?
    /// Half the width of the 95 % interval around `mean` (nil when suppressed).
    package var meanMargin95: Double?
    /// Half the width of the 95 % interval of p50's rank, as a fraction of the people (p10's and p90's are
    /// 1.8 times wider: their score moves by 0.9 per person, the median's by 0.5). Nil when suppressed.
    package var percentileRankMargin95: Double?
    /// The same intervals in the type's unit, read through the released percentiles (`QuantileMechanism.valueMargins95`).
    package var p10Margin95: Double?
    package var p50Margin95: Double?
    package var p90Margin95: Double?
    /// The privacy loss (ρ, zero-concentrated DP) the cell cost.
    package var rho: Double

    init(_ calibration: CellCalibration) {
        peopleStdDev = calibration.countStandardDeviation.rounded(toMultipleOf: 0.01)
        sumStdDev = calibration.sumStandardDeviation.rounded(toMultipleOf: 0.01)
        percentileRho = calibration.percentileLoss.rho
        percentileStep = calibration.bounds.binWidth
        rho = calibration.loss.rho
    }
}
