import Foundation

/// A cell's noisy figures, kept whole so they can be stored and combined later (peer statistics): the
/// count, the centred sum (in `resolution` units) and every histogram bin, each with its own noise, and what
/// the cell cost. Nothing in it is exact, so anything computed from it — sums over days, a mean, percentiles,
/// a k gate — is post-processing and costs no further privacy.
struct NoisyCell: Sendable, Equatable {
    var people: Int64
    var centredSum: Int64
    var bins: [Int64]
    var loss: PrivacyLoss
}

/// Figures composed from noisy cells of one type (a peer bucket: its days' cells), ready to show.
struct ComposedCell: Sendable, Equatable {
    /// Cells composed (days of a peer bucket).
    var cells: Int
    /// The mean noisy count per cell: for one day, that day's noisy count; for a week, the mean day's.
    var people: Double
    /// Middle + Σ noisy sums / Σ noisy counts, clamped to the bounds, to the resolution.
    var mean: Double
    /// From the summed noisy histograms: for several days, percentiles of peers' days (each person-day is one value).
    var p10, p50, p90: Double
    /// Half the width of the 95 % intervals the noise leaves around `mean` and `people`.
    var meanMargin95: Double
    var peopleMargin95: Double
}

extension CellMechanism {
    /// The noisy figures of one cell, with noise calibrated as for a released cell (`release` draws through
    /// here too), for storing. Nothing is suppressed here: the k gate is applied when cells are composed, to
    /// their noisy counts.
    func noisyFigures(_ exact: CellAggregate, calibration: CellCalibration) -> NoisyCell {
        let people = exact.people + noise.discreteGaussian(variance: calibration.countVariance)
        let sum = exact.centredSum + noise.discreteGaussian(variance: calibration.sumVariance)
        let bins = exact.bins.map { $0 + noise.discreteGaussian(variance: calibration.binVariance) }
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
