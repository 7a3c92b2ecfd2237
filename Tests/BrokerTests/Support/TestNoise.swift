@testable import Broker
import Foundation
import Synchronization

/// A reproducible noise source for the privacy tests: Gaussian draws (Box–Muller over SplitMix64, rounded
/// to whole numbers) with the variance the mechanism asks for. It is not the exact discrete Gaussian and not
/// secure — only a stand-in with the right scale, so a test sees real noise and sees the same noise on
/// every run (given the same order of draws).
///
/// TODO: switch to the privacy module's `SeededNoise(seed:)` once the sampler branch is merged.
final class TestSeededNoise: NoiseSource, Sendable {
    private let state: Mutex<UInt64>

    init(seed: UInt64) { state = Mutex(seed) }

    func discreteGaussian(variance: UInt64) -> Int64 {
        let (a, b) = state.withLock { state in (Self.next(&state), Self.next(&state)) }
        // Two uniforms in (0, 1]: 53 random bits each.
        let u1 = (Double(a >> 11) + 1) / 9_007_199_254_740_992
        let u2 = (Double(b >> 11) + 1) / 9_007_199_254_740_992
        let z = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        return Int64((z * Double(variance).squareRoot()).rounded())
    }

    /// SplitMix64 (Steele, Lea and Flood 2014).
    private static func next(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Adds the same offset to every draw: a figure that must carry noise visibly does.
struct FixedNoise: NoiseSource {
    var offset: Int64
    func discreteGaussian(variance: UInt64) -> Int64 { offset }
}
