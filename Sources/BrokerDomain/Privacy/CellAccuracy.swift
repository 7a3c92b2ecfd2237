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
