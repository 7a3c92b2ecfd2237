/// How much one person can move a released cell: each person's figure for a cell (their bucket mean, or
/// mean daily total: `SampleType.aggregation`) is clamped to `lower...upper` and rounded to `resolution`
/// before it is counted, summed or put in a histogram bin. The noise is calibrated to these bounds, so they
/// are the contract of the guarantee (docs/privacy.md lists them). They are narrower than what an upload
/// accepts (`SampleType.range`): they bound a person's *typical* day, where almost everyone lies, because
/// the noise on a sum grows with the width; a rare person beyond them counts as the bound.
package struct ContributionBounds: Sendable, Equatable {
    package var lower: Double
    package var upper: Double
    /// The unit the figures are rounded to before summing, so sums and their noise are whole numbers.
    package var resolution: Double
    /// The percentiles' grid: `bins` equal intervals over `lower...upper`, whose `bins + 1` edges are the
    /// candidates `QuantileMechanism` chooses from. Fine enough that the grid's step is a small part of each
    /// type's accuracy target (a quarter of a beat per minute, 50 steps, 3 minutes of sleep), coarse enough
    /// that a percentile's draw stays cheap (its time grows with the number of candidates).
    package var bins: Int

    /// The midpoint: figures are summed as their distance from it, which halves the sensitivity of the sum
    /// (adding or removing a person moves it by at most half the width).
    var middle: Double { (lower + upper) / 2 }

    /// The most one person moves the centred sum, in `resolution` units.
    var sumSensitivity: UInt64 { UInt64(((upper - lower) / 2 / resolution).rounded(.up)) }

    var binWidth: Double { (upper - lower) / Double(bins) }

    package static func of(_ type: SampleType) -> ContributionBounds {
        switch type {
        case .heartRate: .init(lower: 40, upper: 160, resolution: 0.01, bins: 480)
        case .restingHeartRate: .init(lower: 35, upper: 115, resolution: 0.01, bins: 320)
        case .systolicPressure: .init(lower: 80, upper: 200, resolution: 0.01, bins: 480)
        case .diastolicPressure: .init(lower: 40, upper: 130, resolution: 0.01, bins: 360)
        case .oxygenSaturation: .init(lower: 80, upper: 100, resolution: 0.01, bins: 400)
        case .stepCount: .init(lower: 0, upper: 30_000, resolution: 1, bins: 600)
        case .distanceWalkingRunning: .init(lower: 0, upper: 25_000, resolution: 1, bins: 500)
        case .activeEnergyBurned: .init(lower: 0, upper: 2_000, resolution: 0.1, bins: 400)
        case .standingHours: .init(lower: 0, upper: 16, resolution: 0.01, bins: 320)
        case .sleepingHours: .init(lower: 0, upper: 14, resolution: 0.01, bins: 280)
        case .weight: .init(lower: 30, upper: 200, resolution: 0.01, bins: 680)
        case .height: .init(lower: 120, upper: 220, resolution: 0.01, bins: 400)
        case .bodyTemperature: .init(lower: 34, upper: 41, resolution: 0.001, bins: 700)
        case .respiratoryRate: .init(lower: 6, upper: 40, resolution: 0.01, bins: 340)
        case .heartRateVariability: .init(lower: 5, upper: 200, resolution: 0.01, bins: 390)
        case .bloodGlucose: .init(lower: 2, upper: 25, resolution: 0.001, bins: 460)
        case .vo2Max: .init(lower: 10, upper: 80, resolution: 0.01, bins: 700)
        }
    }
}
