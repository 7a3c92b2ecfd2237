/// The discrete Gaussian N_Z(0, σ²): P(Y = y) ∝ exp(−y²/(2σ²)) on the integers (Canonne, Kamath and Steinke,
/// "The Discrete Gaussian for Differential Privacy", NeurIPS 2020). Its privacy guarantee is the continuous
/// Gaussian's, and it can be sampled exactly, which a floating-point Gaussian cannot.
package enum DiscreteGaussian {
    /// The largest variance sampled. Callers use up to about 10^13; this leaves a factor of 29,000 and keeps every
    /// product in 128 bits with the overflow case negligible (see `sample`). Above about 2^63.5 even 2σ²t² would
    /// no longer fit.
    static let maximumVariance: UInt64 = 1 << 58

    /// Traps on a variance that cannot be sampled: 0 would mean no noise at all, and a caller asking for that is a bug
    /// that must not release an exact value.
    package static func checkVariance(_ variance: UInt64) {
        precondition(
            variance >= 1 && variance <= maximumVariance,
            "discrete Gaussian variance \(variance) is outside 1...2^58")
    }

    /// One draw from N_Z(0, variance) (Algorithm 3): discrete Laplace draws Y of scale t = ⌊σ⌋ + 1, each kept with
    /// probability exp(−(|Y| − σ²/t)²/(2σ²)). With σ² an integer that exponent is (|Y|·t − σ²)² / (2σ²t²), a ratio
    /// of integers, so the test is an exact `ExactBernoulli.exp`. A try is kept with probability 0.54 at σ² = 1 and
    /// about 0.76 from σ² = 1000 up, so a draw takes fewer than two Laplace draws on average whatever the variance.
    /// (How many tries a draw took, and so its time, depends on the value drawn; callers should not expose the
    /// sampling time of one draw to whoever sees the released value.)
    package static func sample(variance: UInt64, using generator: inout some RandomNumberGenerator) -> Int64 {
        checkVariance(variance)
        let sigmaSquared = UInt128(variance)
        let t = UInt128(integerSquareRoot(variance) + 1)
        // ≤ 2 · 2^58 · (2^29 + 1)², just over 2^117: fits.
        let denominator = 2 * sigmaSquared * t * t
        while true {
            let y = DiscreteLaplace.sample(scale: UInt64(t), using: &generator)
            // An overflow below means Y is so far out that it would be kept with a probability that is zero for every
            // purpose, so it is treated as a rejection. |Y|·t < 2^63 · 2^30 cannot overflow, but is checked anyway;
            // (|Y|·t − σ²)² overflows only when |Y|·t − σ² ≥ 2^64, where the keep probability is below
            // exp(−2^128/(2σ²t²)): e^−2047 at the maximum variance, e^−(1.7·10^12) at σ² = 10^13.
            let (scaled, scaledOverflow) = UInt128(y.magnitude).multipliedReportingOverflow(by: t)
            if scaledOverflow { continue }
            let distance = scaled >= sigmaSquared ? scaled - sigmaSquared : sigmaSquared - scaled
            let (numerator, squareOverflow) = distance.multipliedReportingOverflow(by: distance)
            if squareOverflow { continue }
            if ExactBernoulli.exp(numerator: numerator, denominator: denominator, using: &generator) { return y }
        }
    }

    /// ⌊√n⌋ by bisection over 0..<2^32 (keeping low² ≤ n < high²): exact, where `Double.squareRoot` would round
    /// for n above 2^53. A square below 2^64 cannot overflow.
    static func integerSquareRoot(_ n: UInt64) -> UInt64 {
        var low: UInt64 = 0
        var high: UInt64 = 1 << 32
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if middle * middle <= n { low = middle } else { high = middle }
        }
        return low
    }
}
