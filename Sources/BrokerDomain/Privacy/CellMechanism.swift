import Foundation

/// Turns exact cell aggregates into released figures: the one place a figure about people is made for
/// release (group results, cohort sizes and peer statistics all come through here).
///
/// The count and the centred sum get discrete Gaussian noise, and each percentile is drawn by the
/// exponential mechanism (`QuantileMechanism`), all calibrated by `CellCalibration`. A cell is released
/// only when its *noisy* count reaches k, so the suppression itself is part of the mechanism and reveals
/// nothing beyond it. The mean and the margins are post-processing of the noisy figures (clamped to the
/// type's bounds), which costs no further privacy.
package struct CellMechanism: Sendable {
    package init(noise: any NoiseSource, minimumPeople: Int) {
        self.noise = noise
        self.minimumPeople = minimumPeople
    }

    let noise: any NoiseSource
    /// k: the fewest people (noisy) a released cell or cohort may describe.
    let minimumPeople: Int

    package func release(_ exact: CellAggregate, calibration: CellCalibration) -> GroupResultCell {
        let bounds = calibration.bounds
        // All noise is drawn whatever the outcome, so suppression changes nothing that is drawn. (How long the
        // percentiles' draws take does depend on the cell: docs/privacy.md, "Limits we know of".)
        let people = exact.people + noise.discreteGaussian(variance: calibration.countVariance)
        let sum = exact.centredSum + noise.discreteGaussian(variance: calibration.sumVariance)
        let percentiles = QuantileMechanism.Percentile.allCases.map {
            QuantileMechanism.release($0, histogram: exact.bins, bounds: bounds, loss: calibration.percentileLoss, noise: noise)
        }
        var cell = GroupResultCell(
            bucketStart: exact.bucketStart, type: exact.type, people: nil, mean: nil, p10: nil, p50: nil, p90: nil, suppressed: true)
        cell.accuracy = .init(calibration)
        guard people >= minimumPeople else { return cell }
        let mean = (bounds.middle + Double(sum) * bounds.resolution / Double(people)).clamped(to: bounds.lower...bounds.upper)
        cell.people = Int(people)
        cell.mean = mean.rounded(toMultipleOf: bounds.resolution)
        let rounded = percentiles.map { $0.rounded(toMultipleOf: bounds.resolution) }
        (cell.p10, cell.p50, cell.p90) = (rounded[0], rounded[1], rounded[2])
        cell.suppressed = false
        cell.accuracy?.meanMargin95 = calibration.meanMargin(people: Double(people), mean: mean).rounded(toMultipleOf: bounds.resolution)
        let margins = QuantileMechanism.valueMargins95(
            p10: percentiles[0], p50: percentiles[1], p90: percentiles[2], people: Double(people), bounds: bounds,
            loss: calibration.percentileLoss)
        cell.accuracy?.p10Margin95 = margins.p10.rounded(toMultipleOf: bounds.resolution)
        cell.accuracy?.p50Margin95 = margins.p50.rounded(toMultipleOf: bounds.resolution)
        cell.accuracy?.p90Margin95 = margins.p90.rounded(toMultipleOf: bounds.resolution)
        cell.accuracy?.percentileRankMargin95 = calibration.percentileRankMargin(.p50, people: Double(people)).rounded(toMultipleOf: 0.0001)
        return cell
    }

    /// A noisy head count (a cohort's size) costing `loss`; never negative.
    func count(_ exact: Int, loss: PrivacyLoss) -> Int {
        max(0, exact + Int(noise.discreteGaussian(variance: CellCalibration.countVariance(loss: loss))))
    }
}

extension Double {
    func clamped(to range: ClosedRange<Double>) -> Double { Swift.min(Swift.max(self, range.lowerBound), range.upperBound) }

    /// To the released precision: digits beyond the resolution are noise, not information.
    func rounded(toMultipleOf step: Double) -> Double {
        guard step > 0 else { return self }
        let digits = Swift.max(0, Int((-Foundation.log10(step)).rounded(.up)))
        let scale = Foundation.pow(10.0, Double(digits))
        return (self * scale).rounded() / scale
    }
}
