/// The discrete Laplace distribution: P(Y = y) ∝ exp(−|y|/scale) on the integers.
enum DiscreteLaplace {
    /// One draw with the given scale t ≥ 1 (Canonne, Kamath and Steinke 2020, Algorithm 2 with s = 1).
    ///
    /// The magnitude is built as U + t·V: U in 0..<t kept with probability exp(−U/t), so P(U = u) ∝ exp(−u/t);
    /// V the number of exp(−1) coins that come up `true` before the first `false`, so P(V = v) ∝ exp(−v). Then
    /// P(U + t·V = x) ∝ exp(−x/t). A fair coin gives the sign; a "negative zero" is thrown away, or 0 would be
    /// drawn twice as often as it should.
    static func sample(scale: UInt64, using generator: inout some RandomNumberGenerator) -> Int64 {
        precondition(scale >= 1, "the discrete Laplace needs a scale of at least 1")
        let t = UInt128(scale)
        while true {
            let u = UniformInteger.below(t, using: &generator)
            guard ExactBernoulli.exp(numerator: u, denominator: t, using: &generator) else { continue }
            var v: UInt128 = 0
            while ExactBernoulli.exp(numerator: 1, denominator: 1, using: &generator) { v += 1 }
            // A magnitude beyond Int64 (or a t·V beyond UInt128) is drawn again rather than returned: it has
            // probability about exp(−2^63/t), below e^−(1.7·10^10) for every scale `DiscreteGaussian` uses
            // (e^−(2.9·10^12) at σ² = 10^13), so the truncation is invisible.
            let limit = UInt128(Int64.max)
            let (tv, overflow) = t.multipliedReportingOverflow(by: v)
            guard !overflow, tv <= limit, u + tv <= limit else { continue }
            let magnitude = Int64(u + tv)
            let negative = UniformInteger.coin(using: &generator)
            if negative && magnitude == 0 { continue }
            return negative ? -magnitude : magnitude
        }
    }
}
