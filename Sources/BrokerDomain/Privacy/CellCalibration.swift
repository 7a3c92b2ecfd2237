/// The noise of one cell, calibrated to what the cell may cost (`loss`, ρ-zCDP) and to the type's
/// `ContributionBounds`. A person adds one to the count and at most `sumSensitivity` to the centred sum; the
/// discrete Gaussian with variance σ² on a query of sensitivity Δ costs Δ²/(2σ²) (Canonne, Kamath and Steinke
/// 2020, Thm 4). Each percentile is an exponential mechanism (`QuantileMechanism`) costing its own share. The
/// shares add up to the cell's loss.
///
/// The split (`Split.groupCell`: a tenth to the count, 45 % to the sum, 15 % to each of p10, p50 and p90)
/// gives the mean and the percentiles about equal weight: the count needs little (its sensitivity is 1 and
/// it only divides the sum), and a percentile's error is in *ranks*, so it needs far less than the sum,
/// whose sensitivity is half the type's range.
package struct CellCalibration: Sendable, Equatable {
    /// How a cell's loss is shared between its figures (fractions adding up to at most 1). A share of 0
    /// means the figure is not released at all (and has no noise to speak of).
    package struct Split: Sendable, Equatable {
        var count: Double
        var sum: Double
        /// Each of p10, p50 and p90.
        var percentile: Double

        package static let groupCell = Split(count: 0.1, sum: 0.45, percentile: 0.15)
        /// Peer statistics' monthly cells (issue 32): no mean, so no sum. At a peer cell's loss the sum's
        /// noise could not meet any type's accuracy target, while a percentile's error is in ranks and can:
        /// a tenth to the count (which only gates and sizes the cell), 30 % to each percentile.
        package static let peerCell = Split(count: 0.1, sum: 0, percentile: 0.3)
    }

    var bounds: ContributionBounds
    var loss: PrivacyLoss
    var split: Split
    /// Variances of the noise on the count and on the centred sum (in `resolution` units); the sum's is 0
    /// when the split releases no sum.
    var countVariance: UInt64
    var sumVariance: UInt64
    /// What each percentile's exponential mechanism costs: its share, rounded *down* to a millionth.
    var percentileLoss: PrivacyLoss

    package init(type: SampleType, loss: PrivacyLoss, split: Split = .groupCell) {
        self.init(bounds: .of(type), loss: loss, split: split)
    }

    init(bounds: ContributionBounds, loss: PrivacyLoss, split: Split = .groupCell) {
        self.bounds = bounds
        self.loss = loss
        self.split = split
        let rho = loss.rho
        // Rounded up: a larger variance only adds privacy.
        countVariance = Self.variance(sensitivity: 1, rho: rho * split.count)
        sumVariance = split.sum > 0 ? Self.variance(sensitivity: Double(bounds.sumSensitivity), rho: rho * split.sum) : 0
        percentileLoss = PrivacyLoss(micro: Int64((Double(loss.micro) * split.percentile).rounded(.down)))
        // Never round a share up to something: a percentile must cost what its share pays (a cell costs at
        // least a thousandth of ρ, so a share is at least 150 millionths).
        precondition(split.percentile == 0 || percentileLoss.micro >= 1, "a percentile's share of \(loss.rho) rounds to nothing")
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

    /// Half the width of the 95 % interval of a percentile's rank, as a fraction of `people`: ±0.02 means
    /// the released p50 lies between the 48th and the 52nd percentile of the cell's people 95 times in 100.
    func percentileRankMargin(_ percentile: QuantileMechanism.Percentile, people: Double) -> Double {
        QuantileMechanism.rankMargin95(percentile, loss: percentileLoss) / max(people, 1)
    }

    /// Half the width of a 95 % interval of the mean of `people` contributors whose mean is `mean`: the
    /// mean is middle + sum/count, so both noises move it (first-order error propagation).
    func meanMargin(people: Double, mean: Double) -> Double {
        let offset = mean - bounds.middle
        let variance = Double(sumVariance) * bounds.resolution * bounds.resolution + offset * offset * Double(countVariance)
        return 1.96 * variance.squareRoot() / max(people, 1)
    }
}
