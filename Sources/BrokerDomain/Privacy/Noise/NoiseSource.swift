/// Where the privacy module's noise comes from. Production uses `SecureNoise`; tests inject another
/// source at the library level (there is deliberately no configuration setting that changes it).
///
/// Every source takes a variance from 1 to `DiscreteGaussian.maximumVariance` (2^58) and traps outside it:
/// a variance of 0 would release the exact value, and one above the range cannot be sampled exactly in 128-bit
/// integers (see `DiscreteGaussian`). Callers round their variance up to an integer in their own quantised units.
package protocol NoiseSource: Sendable {
    /// One draw from the discrete Gaussian N_Z(0, variance) — exact, integer arithmetic only.
    func discreteGaussian(variance: UInt64) -> Int64
    /// One draw of the exponential mechanism (`ExponentialMechanism`): an index into `scores`, chosen with
    /// probability ∝ exp(−(score − min score) · numerator / denominator) — exact, integer arithmetic only.
    func exponentialMechanism(scores: [UInt64], numerator: UInt64, denominator: UInt64) -> Int
}
