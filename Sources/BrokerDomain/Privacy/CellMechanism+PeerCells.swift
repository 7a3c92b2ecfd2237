import Foundation

extension CellMechanism {
    /// The released figures of one peer cell (`CellCalibration.Split.peerCell`): a noisy count and p10, p50
    /// and p90 by the exponential mechanism over the type's grid, from the cell's exact histogram. Nothing is
    /// suppressed here and every draw is made whatever the cell holds: the k gate is applied when the cell is
    /// read, to its noisy count, and an empty cell's percentiles are noise like any other's.
    package func peerFigures(_ exact: CellAggregate, calibration: CellCalibration) -> PeerFigures {
        let people = exact.people + noise.discreteGaussian(variance: calibration.countVariance)
        let percentiles = QuantileMechanism.Percentile.allCases.map {
            QuantileMechanism.release($0, histogram: exact.bins, bounds: calibration.bounds, loss: calibration.percentileLoss, noise: noise)
        }
        return PeerFigures(people: people, p10: percentiles[0], p50: percentiles[1], p90: percentiles[2], loss: calibration.loss)
    }

    /// What a person's page may show of a stored peer cell of `type`: nil when its noisy count is below k
    /// (nothing of it is shown); otherwise the count and each percentile with its 95 % margin, a percentile
    /// whose margin is wider than the type's target (`PeerAccuracyTarget`) left out. Post-processing only.
    package func shown(_ figures: PeerFigures, type: SampleType) -> ShownPeerFigures? {
        guard figures.people >= Int64(minimumPeople) else { return nil }
        let bounds = ContributionBounds.of(type)
        let margins = Self.margins95(figures, type: type)
        let target = PeerAccuracyTarget.of(type)
        func figure(_ value: Double, _ margin: Double) -> (value: Double, margin: Double)? {
            margin <= target ? (value.rounded(toMultipleOf: bounds.resolution), margin) : nil
        }
        return ShownPeerFigures(
            people: Int(figures.people), peopleMargin95: margins.people, p10: figure(figures.p10, margins.p10),
            p50: figure(figures.p50, margins.p50), p90: figure(figures.p90, margins.p90))
    }

    /// Half the widths of the 95 % intervals around a peer cell's figures: the count's from its noise, each
    /// percentile's from its rank margin read through the released figures (`QuantileMechanism.valueMargins95`),
    /// to the type's resolution. Data-independent but for the released figures: post-processing.
    ///
    /// The median's is read through the nearer-behaved of p10 and p90 (the smaller of the two slopes around
    /// it), not the steeper: at a peer cell's loss and a band of 1,000–1,500 people, p10 or p90 lands in the
    /// empty part of the type's range one time in ten or more (the exponential mechanism's many candidates
    /// there, each a tenth of the people away, outweigh the few near the true figure), and read through such
    /// a draw the median's margin was several times its error, so an accurate median went unshown. The
    /// nearer side alone understates a skewed band's margin a little, which the grid's step added back
    /// covers: `d4h-dev bench peer-accuracy` measures how often the error is within the stated margin.
    package static func margins95(_ figures: PeerFigures, type: SampleType) -> (people: Double, p10: Double, p50: Double, p90: Double) {
        let calibration = CellCalibration(type: type, loss: figures.loss, split: .peerCell)
        let bounds = calibration.bounds
        let people = Double(figures.people)
        let margins = QuantileMechanism.valueMargins95(
            p10: figures.p10, p50: figures.p50, p90: figures.p90, people: people, bounds: bounds, loss: calibration.percentileLoss)
        let sorted = [figures.p10, figures.p50, figures.p90].sorted()
        let spread = QuantileMechanism.rankMargin95(.p50, loss: calibration.percentileLoss) / max(people, 1)
        // Within 0.4 of the median the distribution is taken as linear on each side, as `valueMargins95` does;
        // plus one step of the grid, since the released median is a candidate and the exact one lies anywhere
        // between two.
        let slope = min(sorted[1] - sorted[0], sorted[2] - sorted[1]) / 0.4
        let median = spread < 0.4 ? spread * slope + bounds.binWidth : margins.p50
        return (
            (1.96 * calibration.countStandardDeviation).rounded(toMultipleOf: 0.1), margins.p10.rounded(toMultipleOf: bounds.resolution),
            median.rounded(toMultipleOf: bounds.resolution), margins.p90.rounded(toMultipleOf: bounds.resolution)
        )
    }
}

/// A peer cell as a page shows it: the noisy count and its 95 % margin, and each percentile that meets its
/// type's accuracy target with its own 95 % margin (nil when it does not).
package struct ShownPeerFigures: Sendable, Equatable {
    package var people: Int
    package var peopleMargin95: Double
    package var p10, p50, p90: (value: Double, margin: Double)?

    package static func == (a: Self, b: Self) -> Bool {
        a.people == b.people && a.peopleMargin95 == b.peopleMargin95 && a.p10?.value == b.p10?.value && a.p10?.margin == b.p10?.margin
            && a.p50?.value == b.p50?.value && a.p50?.margin == b.p50?.margin && a.p90?.value == b.p90?.value
            && a.p90?.margin == b.p90?.margin
    }
}
