import BrokerDomain
import Synchronization

/// Deterministic draws from a seed, for statistical tests only (a seeded generator behind a lock so it is Sendable).
///
/// Public only so that `d4h privacy noise --seed` can print a reproducible stream for the cross-check against
/// scipy and OpenDP (scripts/privacy-noise-check.py); the server never builds one. SplitMix64 (`SeededRandom`)
/// is not cryptographic: predictable noise protects nothing, which is why production has no way to select this.
package struct SeededNoise: NoiseSource {
    private let generator: LockedGenerator

    package init(seed: UInt64) {
        generator = LockedGenerator(SeededRandom(seed: seed))
    }

    package func discreteGaussian(variance: UInt64) -> Int64 {
        generator.state.withLock { DiscreteGaussian.sample(variance: variance, using: &$0) }
    }

    package func exponentialMechanism(scores: [UInt64], numerator: UInt64, denominator: UInt64) -> Int {
        generator.state.withLock { ExponentialMechanism.sample(scores: scores, numerator: numerator, denominator: denominator, using: &$0) }
    }

    /// A class, because `Mutex` is non-copyable and a `NoiseSource` must be copyable; copies of one
    /// `SeededNoise` therefore continue one stream rather than repeating it.
    private final class LockedGenerator: Sendable {
        let state: Mutex<SeededRandom>
        init(_ generator: SeededRandom) { state = Mutex(generator) }
    }
}
