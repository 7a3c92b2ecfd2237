/// Draws from the operating system's CSPRNG (`SystemRandomNumberGenerator`: getrandom(2) on Linux).
///
/// A fresh generator per draw holds no state, so the struct is trivially `Sendable` and concurrent releases
/// never share or wait on a lock; each 64-bit word is its own getrandom(2) call, which is cheap next to a release.
package struct SecureNoise: NoiseSource {
    package init() {}

    package func discreteGaussian(variance: UInt64) -> Int64 {
        var generator = SystemRandomNumberGenerator()
        return DiscreteGaussian.sample(variance: variance, using: &generator)
    }

    /// Thousands of words per draw on a fine grid: from a buffered read of the same CSPRNG (`BufferedSystemRandom`).
    package func exponentialMechanism(scores: [UInt64], numerator: UInt64, denominator: UInt64) -> Int {
        var generator = BufferedSystemRandom()
        return ExponentialMechanism.sample(scores: scores, numerator: numerator, denominator: denominator, using: &generator)
    }
}
