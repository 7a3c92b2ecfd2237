import BrokerDomain
import Foundation

/// SplitMix64: a tiny, fast, seedable generator, so synthetic data is the same on every run and every machine.
///
/// Not cryptographic. The draws below are written out here rather than taken from `Double.random(in:using:)`,
/// whose algorithm the standard library does not promise to keep, so a toolchain upgrade cannot change the data.
package struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    /// An independent stream for one purpose of one item (say, person 42's heart rate), so what any stream yields
    /// depends only on `(seed, keys)`, never on how much another stream was used or on the order items are made in.
    package init(seed: UInt64, _ keys: UInt64...) {
        var mixed = Self.mix(seed ^ 0x6A09_E667_F3BC_C908)
        for key in keys { mixed = Self.mix(mixed ^ Self.mix(key &+ 0x9E37_79B9_7F4A_7C15)) }
        state = mixed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// The SplitMix64 finaliser: a bijection that spreads every input bit over the whole word.
    package static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    package mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    package mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * unit()
    }

    /// Uniform in 0..<bound (bound > 0); the modulo bias is below 2^-40 for the small bounds used here.
    package mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    package mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// Normally distributed (Box–Muller; one of the pair is thrown away, which keeps the stream stateless).
    package mutating func normal(mean: Double = 0, deviation: Double = 1) -> Double {
        let u1 = 1 - unit()  // in (0, 1], so log never sees 0
        let u2 = unit()
        return mean + deviation * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
