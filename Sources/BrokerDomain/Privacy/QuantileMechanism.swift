import Foundation

/// A cell's percentiles (p10, p50, p90) by the exponential mechanism over a fixed grid of candidates (Smith
/// 2011; the same mechanism as OpenDP's `make_private_quantile`), instead of reading them from a noisy
/// histogram: a noisy histogram's empty bins carry noise too, which pushed medians up by a fifth of a
/// bin's people in sparse tails, and every bin's noise was paid for whether a percentile needed it or not.
///
/// The candidates are the type's grid, lower + j·step for j = 0…bins (`ContributionBounds`). The score of candidate j for the q-quantile is
/// |(1 − q)·Bⱼ − q·Aⱼ|, where Bⱼ and Aⱼ are how many people's figures lie below and above it (the people
/// *on* it count in neither, as in OpenDP): 0 at the exact quantile, and a candidate many people share
/// scores as well as they deserve, not like the empty candidates beside it. Adding or removing a person
/// moves Bⱼ or Aⱼ by at most 1, so the score moves by at most Δ = max(q, 1 − q). Scores are kept in
/// tenths (q is 0.1, 0.5 or 0.9) so they are whole numbers, which the exact sampler needs.
///
/// Privacy: the mechanism with weights exp(−ε·score/(2Δ)) is ε-bounded-range, hence ε²/8-zCDP (Cesar and
/// Rogers 2021), so a percentile costing ρ uses ε = √(8ρ). ε is rounded *down* to a millionth: a smaller ε
/// only adds privacy.
package enum QuantileMechanism {
    /// The released percentiles, in tenths of the distribution.
    package enum Percentile: Int, CaseIterable, Sendable {
        case p10 = 1
        case p50 = 5
        case p90 = 9
        var q: Double { Double(rawValue) / 10 }
        /// Δ in tenths of a rank.
        var sensitivity: UInt64 { UInt64(max(rawValue, 10 - rawValue)) }
    }

    /// The scores of every candidate for `percentile`, from the exact count of the cell's figures by place on
    /// the grid (`CellAggregate.bins`: entry 2j on candidate j, entry 2j + 1 between candidates j and j + 1).
    static func scores(_ percentile: Percentile, histogram: [Int64]) -> [UInt64] {
        let people = histogram.reduce(0) { $0 + max(0, $1) }
        let weightBelow = Int64(10 - percentile.rawValue)
        let weightAbove = Int64(percentile.rawValue)
        var below: Int64 = 0
        var scores: [UInt64] = []
        scores.reserveCapacity(histogram.count / 2 + 1)
        for (place, count) in histogram.enumerated() {
            let here = max(0, count)
            if place % 2 == 0 {
                let above = people - below - here
                scores.append((weightBelow * below - weightAbove * above).magnitude)
            }
            below += here
        }
        return scores
    }

    /// ε·10⁶ for a loss of ρ: ⌊√(8ρ)·10⁶⌋ = ⌊√(8·ρ_micro·10⁶)⌋, in integers.
    static func scaledEpsilon(_ loss: PrivacyLoss) -> UInt64 {
        DiscreteGaussian.integerSquareRoot(UInt64(max(0, loss.micro)) * 8_000_000)
    }

    /// One released percentile of the cell whose exact histogram is `histogram`, costing `loss`.
    static func release(
        _ percentile: Percentile, histogram: [Int64], bounds: ContributionBounds, loss: PrivacyLoss, noise: any NoiseSource
    ) -> Double {
        let epsilon = scaledEpsilon(loss)
        precondition(epsilon >= 1, "a percentile must cost something: ρ \(loss.rho) gives no ε")
        // exp(−ε·score/(2Δ)) with score and Δ both in tenths and ε in millionths.
        let index = noise.exponentialMechanism(
            scores: scores(percentile, histogram: histogram), numerator: epsilon, denominator: 2 * percentile.sensitivity * 1_000_000)
        return bounds.lower + Double(index) * bounds.binWidth
    }

    /// Half the width of the 95 % interval of the released percentile's *rank*, in people: the mechanism's
    /// rank error is about Laplace with scale 2Δ/ε (weights exp(−ε·|rank error|/(2Δ)) over a dense grid), so
    /// 95 % of draws land within ln 20 · 2Δ/ε ranks. Data-independent; where several people share a
    /// candidate the figure moves in steps of them, which the value margins' grid step allows for.
    static func rankMargin95(_ percentile: Percentile, loss: PrivacyLoss) -> Double {
        let epsilon = Double(max(1, scaledEpsilon(loss))) / 1_000_000
        return log(20) * 2 * (Double(percentile.sensitivity) / 10) / epsilon
    }

    /// The 95 % margins of released percentiles in the type's unit, from their rank margin and the released
    /// figures alone (post-processing): the distribution is taken as piecewise linear through the bounds and
    /// the released p10, p50 and p90, and a percentile's margin is the larger of the distances to the
    /// figures `rank margin / people` above and below it. Where people are dense the margin is narrow; where
    /// the released figures are far apart (few people there, or a tail) it widens.
    static func valueMargins95(
        p10: Double, p50: Double, p90: Double, people: Double, bounds: ContributionBounds, loss: PrivacyLoss
    ) -> (p10: Double, p50: Double, p90: Double) {
        let figures = [p10, p50, p90].sorted()
        let knots: [(q: Double, value: Double)] = [(0, bounds.lower), (0.1, figures[0]), (0.5, figures[1]), (0.9, figures[2]), (1, bounds.upper)]
        func value(at q: Double) -> Double {
            let q = q.clamped(to: 0...1)
            for (a, b) in zip(knots, knots.dropFirst()) where q <= b.q {
                return a.value + (b.value - a.value) * (q - a.q) / (b.q - a.q)
            }
            return bounds.upper
        }
        func margin(_ percentile: Percentile) -> Double {
            let spread = rankMargin95(percentile, loss: loss) / max(people, 1)
            let centre = value(at: percentile.q)
            return max(value(at: percentile.q + spread) - centre, centre - value(at: percentile.q - spread))
        }
        return (margin(.p10), margin(.p50), margin(.p90))
    }
}
