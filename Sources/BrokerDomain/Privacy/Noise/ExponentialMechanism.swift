/// The exponential mechanism over a finite list of candidates (McSherry and Talwar 2007), sampled exactly:
/// candidate i is chosen with probability proportional to exp(−(scoreᵢ − min score) · numerator / denominator),
/// so the lowest score is the likeliest. The weights are e to the minus a ratio of integers, which
/// `ExactBernoulli.exp` decides without floating point; a floating-point implementation leaks through its
/// rounding as a floating-point Laplace does (Ilvento, *Implementing the Exponential Mechanism with Base-2
/// Differential Privacy*, 2020).
///
/// By rejection: a candidate drawn uniformly is kept with probability equal to its weight (at most 1, and
/// exactly 1 for the best). Every try keeps candidate i with probability wᵢ/m, so a kept candidate is i with
/// probability wᵢ/Σw: the exact distribution. A try costs one uniform draw and, for a poor candidate, about
/// one e^−1 coin (`ExactBernoulli.exp` stops at its first failure); the expected number of tries is m/Σw ≤ m.
package enum ExponentialMechanism {
    /// One draw: an index into `scores`. `numerator / denominator` is the weight's rate per unit of score
    /// (ε / (2Δ) for a score of sensitivity Δ); both are positive.
    package static func sample(
        scores: [UInt64], numerator: UInt64, denominator: UInt64, using generator: inout some RandomNumberGenerator
    ) -> Int {
        precondition(!scores.isEmpty, "the exponential mechanism needs at least one candidate")
        precondition(numerator > 0 && denominator > 0, "the exponential mechanism needs a positive rate")
        let best = scores.min()!
        let count = UInt128(scores.count)
        while true {
            let index = Int(UniformInteger.below(count, using: &generator))
            // (score − best) < 2^64 and numerator < 2^64: the product fits in 128 bits.
            let exponent = UInt128(scores[index] - best) * UInt128(numerator)
            if ExactBernoulli.exp(numerator: exponent, denominator: UInt128(denominator), using: &generator) { return index }
        }
    }
}
