/// The noise of one cell, calibrated to what the cell may cost (`loss`, ρ-zCDP) and to the type's
/// `ContributionBounds`. A person adds one to the count, at most `sumSensitivity` to the centred sum, and
/// one to one histogram bin; the discrete Gaussian with variance σ² on a query of sensitivity Δ costs
/// Δ²/(2σ²) (Canonne, Kamath and Steinke 2020, Thm 4), and the three add up to the cell's loss.
///
/// The split (a fifth to the count, three fifths to the sum, a fifth to the histogram) favours the mean,
/// the figure companies use most; the count needs little (its sensitivity is 1), and the percentiles are
/// read from cumulative bins, which smooth the noise of single bins.
package struct CellCalibration: Sendable, Equatable {
    var bounds: ContributionBounds
    var loss: PrivacyLoss
    /// Variances of the noise on the count, on the centred sum (in `resolution` units), and on each bin.
    var countVariance: UInt64
    var sumVariance: UInt64
    var binVariance: UInt64

    static let countShare = 0.2, sumShare = 0.6, binShare = 0.2

    package init(type: SampleType, loss: PrivacyLoss) {
        self.init(bounds: .of(type), loss: loss)
    }

    init(bounds: ContributionBounds, loss: PrivacyLoss) {
        self.bounds = bounds
        self.loss = loss
        let rho = loss.rho
        // Rounded up: a larger variance only adds privacy.
        countVariance = Self.variance(sensitivity: 1, rho: rho * Self.countShare)
        sumVariance = Self.variance(sensitivity: Double(bounds.sumSensitivity), rho: rho * Self.sumShare)
        binVariance = Self.variance(sensitivity: 1, rho: rho * Self.binShare)
    }

    /// σ² = Δ²/(2ρ), rounded up to a whole number.
    static func variance(sensitivity: Double, rho: Double) -> UInt64 {
        precondition(rho > 0, "a cell must cost something: a zero loss has no finite noise")
        return UInt64(max(1, (sensitivity * sensitivity / (2 * rho)).rounded(.up)))
    }

    /// A count's noise alone, for a cohort size (sensitivity 1, the whole loss).
    static func countVariance(loss: PrivacyLoss) -> UInt64 { variance(sensitivity: 1, rho: loss.rho) }

    var countStandardDeviation: Double { Double(countVariance).squareRoot() }
    /// In the type's unit.
    var sumStandardDeviation: Double { Double(sumVariance).squareRoot() * bounds.resolution }
    var binStandardDeviation: Double { Double(binVariance).squareRoot() }

    /// Half the width of a 95 % interval of the mean of `people` contributors whose mean is `mean`: the
    /// mean is middle + sum/count, so both noises move it (first-order error propagation).
    func meanMargin(people: Double, mean: Double) -> Double {
        let offset = mean - bounds.middle
        let variance = Double(sumVariance) * bounds.resolution * bounds.resolution + offset * offset * Double(countVariance)
        return 1.96 * variance.squareRoot() / max(people, 1)
    }
}
