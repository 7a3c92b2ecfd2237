import Foundation

extension CellMechanism {
    /// The noisy figures of one cell, with noise calibrated as for a released cell (`release` draws through
    /// here too), for storing. Nothing is suppressed here: the k gate is applied when cells are composed, to
    /// their noisy counts.
    func noisyFigures(_ exact: CellAggregate, calibration: CellCalibration) -> NoisyCell {
        let people = exact.people + noise.discreteGaussian(variance: calibration.countVariance)
        let sum = exact.centredSum + noise.discreteGaussian(variance: calibration.sumVariance)
        // Until peer cells move to the quantile mechanism (issue 32): noise per bin at the percentiles' share.
        let binVariance = CellCalibration.variance(sensitivity: 1, rho: calibration.percentileLoss.rho * 3)
        let bins = exact.bins.map { $0 + noise.discreteGaussian(variance: binVariance) }
        return NoisyCell(people: people, centredSum: sum, bins: bins, loss: calibration.loss)
    }

    /// Composes noisy cells of one type into one figure by adding their noisy counts, sums and bins (pure
    /// post-processing). Shown only when the mean noisy count per cell reaches k — for one day, the day's
    /// noisy count — so a week is gated as its typical day is, never on person-days: seven days of k/7
    /// people each must not pass. Nil when it does not, or when the summed bins hold no one (no percentile).
    ///
    /// The noise of a sum of cells is the sum of their noises: its variance is the sum of the cells'
    /// variances (each from the loss the cell was stored with), which gives the margins.
    func compose(_ cells: [NoisyCell], bounds: ContributionBounds) -> ComposedCell? {
        guard let first = cells.first else { return nil }
        let people = cells.reduce(0) { $0 + $1.people }
        guard people >= Int64(minimumPeople) * Int64(cells.count) else { return nil }
        let sum = cells.reduce(0) { $0 + $1.centredSum }
        var bins = [Int64](repeating: 0, count: first.bins.count)
        for cell in cells {
            for (index, count) in cell.bins.enumerated() where bins.indices.contains(index) { bins[index] += count }
        }
        guard let p10 = NoisyPercentiles.percentile(0.1, of: bins, bounds: bounds),
            let p50 = NoisyPercentiles.percentile(0.5, of: bins, bounds: bounds),
            let p90 = NoisyPercentiles.percentile(0.9, of: bins, bounds: bounds)
        else { return nil }
        let mean = (bounds.middle + Double(sum) * bounds.resolution / Double(people)).clamped(to: bounds.lower...bounds.upper)
        var countVariance = 0.0
        var sumVariance = 0.0
        for cell in cells {
            let calibration = CellCalibration(bounds: bounds, loss: cell.loss)
            countVariance += Double(calibration.countVariance)
            sumVariance += Double(calibration.sumVariance) * bounds.resolution * bounds.resolution
        }
        // As `CellCalibration.meanMargin`: the mean is middle + sum/count, and both noises move it.
        let offset = mean - bounds.middle
        let meanMargin = 1.96 * (sumVariance + offset * offset * countVariance).squareRoot() / Double(people)
        let count = Double(cells.count)
        return ComposedCell(
            cells: cells.count, people: Double(people) / count, mean: mean.rounded(toMultipleOf: bounds.resolution),
            p10: p10.rounded(toMultipleOf: bounds.resolution), p50: p50.rounded(toMultipleOf: bounds.resolution),
            p90: p90.rounded(toMultipleOf: bounds.resolution), meanMargin95: meanMargin.rounded(toMultipleOf: bounds.resolution),
            peopleMargin95: (1.96 * countVariance.squareRoot() / count).rounded(toMultipleOf: 0.1))
    }
}
