import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The privacy module's noise primitive (`Sources/BrokerDomain/Privacy/Noise`): exact coins, the discrete Laplace and the
/// discrete Gaussian, checked against their exact distributions.
///
/// Every statistical test draws from a fixed seed, so it is deterministic: it cannot be flaky, and the bounds sit at
/// about 5 standard deviations (a false alarm of about 3 in 10 million should a seed or the order of draws change),
/// far enough for an honest sampler and close enough that a wrong probability or a wrong scale fails. Double is used
/// here only to compute what to expect; the samplers themselves never see one.
@Suite("PrivacyNoise: exact discrete Gaussian noise")
struct PrivacyNoiseTests {
    /// How many standard deviations a statistic may stray.
    static let z = 5.0

    // ---- coins ----------------------------------------------------------------------------------------------

    @Test("Bernoulli(exp(−γ)) comes up true with probability e^−γ for γ = 0, 1/3, 1, 5/2 and 7")
    func bernoulliExp() {
        var generator = SeededRandom(seed: 0x5EED_0001)
        let draws = 200_000
        for (numerator, denominator) in [(0, 1), (1, 3), (1, 1), (5, 2), (7, 1)] as [(UInt128, UInt128)] {
            var hits = 0
            for _ in 0..<draws {
                if ExactBernoulli.exp(numerator: numerator, denominator: denominator, using: &generator) { hits += 1 }
            }
            let p = Foundation.exp(-Double(numerator) / Double(denominator))
            let expected = Double(draws) * p
            let deviation = (Double(draws) * p * (1 - p)).squareRoot()
            let score = deviation == 0 ? (Double(hits) == expected ? 0 : .infinity) : (Double(hits) - expected) / deviation
            print("PrivacyNoise: Bernoulli(exp(−\(numerator)/\(denominator))): \(hits) of \(draws), expected \(expected), z = \(score)")
            #expect(abs(score) <= Self.z, "γ = \(numerator)/\(denominator): \(hits) hits, expected \(expected) ± \(deviation)")
        }
    }

    @Test("Bernoulli(exp(−γ)) for an enormous γ is false and returns at once; a whole γ like 40/8 is e^−5")
    func bernoulliExpExtremes() {
        var generator = SeededRandom(seed: 0x5EED_0002)
        // γ ≈ 3·10^37: ⌊γ⌋ exp(−1) coins, but the first false ends it.
        for _ in 0..<1000 {
            #expect(!ExactBernoulli.exp(numerator: .max, denominator: 11, using: &generator))
        }
        let draws = 200_000
        var hits = 0
        for _ in 0..<draws {
            if ExactBernoulli.exp(numerator: 40, denominator: 8, using: &generator) { hits += 1 }
        }
        let p = Foundation.exp(-5.0)
        #expect(abs(Double(hits) - Double(draws) * p) <= Self.z * (Double(draws) * p * (1 - p)).squareRoot())
    }

    @Test("uniform integers are unbiased below small bounds and below bounds that need two words")
    func uniformIntegers() {
        var generator = SeededRandom(seed: 0x5EED_0003)
        let draws = 120_000
        // 3 and 6 waste most of a word; 2^64 + 2^63 + 1 needs 65 bits (the two-word path) and is cut into three
        // ranges whose exact probabilities are known; UInt128.max needs all 128 bits (the full mask).
        let half = UInt128(1) << 63
        let cases: [(bound: UInt128, cells: [UInt128])] = [
            (3, [1, 2, 3]), (6, [1, 2, 3, 4, 5, 6]),
            ((UInt128(1) << 64) + half + 1, [half, UInt128(1) << 64, (UInt128(1) << 64) + half + 1]),
            (.max, [UInt128.max / 4, UInt128.max / 2, UInt128.max]),
        ]
        for (bound, cells) in cases {
            var counts = [Int](repeating: 0, count: cells.count)
            for _ in 0..<draws {
                let value = UniformInteger.below(bound, using: &generator)
                #expect(value < bound)
                counts[cells.firstIndex { value < $0 }!] += 1
            }
            var previous: UInt128 = 0
            let probabilities = cells.map { cell in
                defer { previous = cell }
                return Double(cell - previous) / Double(bound)
            }
            let test = ChiSquare(counts: counts, probabilities: probabilities)
            #expect(test.passes, "bound \(bound): \(counts), \(test)")
        }
        #expect(UniformInteger.below(1, using: &generator) == 0)
    }

    @Test("⌊√n⌋ is exact at and around perfect squares, and at UInt64.max")
    func integerSquareRoot() {
        for root: UInt64 in [0, 1, 2, 3, 31, 3_162_277, 1 << 29, 4_294_967_295] {
            let square = root * root
            #expect(DiscreteGaussian.integerSquareRoot(square) == root)
            if root > 0 {
                #expect(DiscreteGaussian.integerSquareRoot(square + 1) == root)
                #expect(DiscreteGaussian.integerSquareRoot(square - 1) == root - 1)
            }
        }
        #expect(DiscreteGaussian.integerSquareRoot(UInt64.max) == 4_294_967_295)
        #expect(DiscreteGaussian.integerSquareRoot(10_000_000_000_000) == 3_162_277)
    }

    // ---- the distributions ---------------------------------------------------------------------------------

    /// The scales the discrete Gaussian draws from for σ² = 1, 10 and 1000 (t = ⌊σ⌋ + 1), and scale 1.
    @Test("the discrete Laplace fits its exact pmf (χ²)", arguments: [1, 2, 4, 32] as [UInt64])
    func discreteLaplace(scale: UInt64) {
        var generator = SeededRandom(seed: 0x5EED_1000 + scale)
        let draws = (0..<200_000).map { _ in DiscreteLaplace.sample(scale: scale, using: &generator) }
        // P(y) = (1 − q)/(1 + q) · q^|y| with q = e^(−1/t).
        let q = Foundation.exp(-1 / Double(scale))
        let test = ChiSquare(draws: draws) { y in (1 - q) / (1 + q) * pow(q, Double(y.magnitude)) }
        print("PrivacyNoise: discrete Laplace scale \(scale): \(test)")
        #expect(test.passes, "\(test)")
        #expect(abs(Self.mean(draws)) <= Self.z * (2 * q).squareRoot() / (1 - q) / Double(draws.count).squareRoot())
    }

    @Test("the discrete Gaussian fits its exact pmf (χ²) and its variance", arguments: [1, 10, 1000] as [UInt64])
    func discreteGaussian(variance: UInt64) {
        var generator = SeededRandom(seed: 0x5EED_2000 + variance)
        let draws = (0..<200_000).map { _ in DiscreteGaussian.sample(variance: variance, using: &generator) }
        let pmf = Self.discreteGaussianPMF(variance: Double(variance))
        let test = ChiSquare(draws: draws, pmf: pmf)
        print("PrivacyNoise: discrete Gaussian σ² = \(variance): \(test)")
        #expect(test.passes, "\(test)")

        // The variance separately: the most direct check of the scale. The discrete Gaussian's is a shade below σ²
        // (by 2·10^−7 at σ² = 1), so it is summed from the pmf; its fourth moment gives the sample variance's spread.
        let support = Int64(-60 * Double(variance).squareRoot() - 10)...Int64(60 * Double(variance).squareRoot() + 10)
        let exactVariance = support.reduce(0.0) { $0 + Double($1) * Double($1) * pmf($1) }
        let fourth = support.reduce(0.0) { $0 + pow(Double($1), 4) * pmf($1) }
        let spread = ((fourth - exactVariance * exactVariance) / Double(draws.count)).squareRoot()
        let sampleVariance = Self.meanSquare(draws)
        print("PrivacyNoise: discrete Gaussian σ² = \(variance): sample variance \(sampleVariance), exact \(exactVariance)")
        #expect(abs(sampleVariance - exactVariance) <= Self.z * spread)
    }

    @Test("the discrete Gaussian at σ² = 10^10 has mean 0, variance σ² and symmetric normal tails")
    func discreteGaussianLargeVariance() {
        var generator = SeededRandom(seed: 0x5EED_3000)
        let variance: UInt64 = 10_000_000_000
        let sigma = 100_000.0
        let n = 200_000
        let draws = (0..<n).map { _ in DiscreteGaussian.sample(variance: variance, using: &generator) }
        #expect(abs(Self.mean(draws)) <= Self.z * sigma / Double(n).squareRoot())
        // Var(s²) = 2σ⁴/n for a Gaussian (at this σ the discrete one differs by far less than the sampling error).
        #expect(abs(Self.meanSquare(draws) / Double(variance) - 1) <= Self.z * (2 / Double(n)).squareRoot())
        // Beyond 1, 2 and 3 σ on each side, as often as the normal says, and as often on one side as on the other.
        for k in [1.0, 2.0, 3.0] {
            let above = draws.count(where: { Double($0) > k * sigma })
            let below = draws.count(where: { Double($0) < -k * sigma })
            let p = erfc(k / 2.squareRoot()) / 2
            let bound = Self.z * (Double(n) * p * (1 - p)).squareRoot()
            #expect(abs(Double(above) - Double(n) * p) <= bound, "beyond +\(k)σ: \(above), expected \(Double(n) * p)")
            #expect(abs(Double(below) - Double(n) * p) <= bound, "beyond −\(k)σ: \(below), expected \(Double(n) * p)")
            #expect(Double(abs(above - below)) <= Self.z * Double(above + below).squareRoot())
        }
    }

    // ---- the sources ---------------------------------------------------------------------------------------

    @Test("SecureNoise varies from draw to draw; NoNoise is always 0")
    func sources() {
        let secure = SecureNoise()
        let draws = (0..<4).map { _ in secure.discreteGaussian(variance: 10_000_000_000_000) }
        // Two equal draws at σ ≈ 3·10^6 have probability about 10^−7 per pair.
        #expect(Set(draws).count == draws.count, "\(draws)")
        #expect(draws.allSatisfy { $0.magnitude < 60 * 3_162_278 })
        for variance: UInt64 in [1, 1000, 10_000_000_000_000, DiscreteGaussian.maximumVariance] {
            #expect(NoNoise().discreteGaussian(variance: variance) == 0)
        }
    }

    @Test("a variance of 0 (no noise at all) or beyond 2^58 traps instead of releasing anything")
    func varianceOutOfRange() async {
        await #expect(processExitsWith: .failure) { _ = SecureNoise().discreteGaussian(variance: 0) }
        await #expect(processExitsWith: .failure) {
            _ = SecureNoise().discreteGaussian(variance: DiscreteGaussian.maximumVariance + 1)
        }
        await #expect(processExitsWith: .failure) { _ = NoNoise().discreteGaussian(variance: 0) }
    }

    @Test("SeededNoise repeats its stream for a seed and differs between seeds")
    func seeded() {
        let stream = { (seed: UInt64) in
            let noise = SeededNoise(seed: seed)
            return (0..<20).map { _ in noise.discreteGaussian(variance: 1_000_000) }
        }
        #expect(stream(7) == stream(7))
        #expect(stream(7) != stream(8))
    }

    @Test("huge variances neither trap nor hang", .timeLimit(.minutes(1)))
    func hugeVariances() {
        let secure = SecureNoise()
        for variance: UInt64 in [10_000_000_000_000, 99_999_999_999_999, DiscreteGaussian.maximumVariance] {
            let sigma = Double(variance).squareRoot()
            for _ in 0..<2000 {
                #expect(Double(secure.discreteGaussian(variance: variance).magnitude) < 60 * sigma)
            }
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    /// The normalised pmf of N_Z(0, σ²): exp(−y²/(2σ²)) over its sum, summed out to 60σ (beyond, e^−1800).
    static func discreteGaussianPMF(variance: Double) -> (Int64) -> Double {
        let reach = Int64(60 * variance.squareRoot() + 10)
        let weight = { (y: Int64) in Foundation.exp(-Double(y) * Double(y) / (2 * variance)) }
        let total = (-reach...reach).reduce(0.0) { $0 + weight($1) }
        return { weight($0) / total }
    }

    static func mean(_ draws: [Int64]) -> Double {
        draws.reduce(0.0) { $0 + Double($1) } / Double(draws.count)
    }

    /// The mean square about the known mean 0.
    static func meanSquare(_ draws: [Int64]) -> Double {
        draws.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(draws.count)
    }

    /// Pearson's χ² goodness of fit, with its limit at about 5σ (p ≈ 3·10^−7) by the Wilson–Hilferty approximation.
    struct ChiSquare: CustomStringConvertible {
        var statistic: Double
        var degreesOfFreedom: Int

        init(counts: [Int], probabilities: [Double]) {
            let total = Double(counts.reduce(0, +))
            statistic = zip(counts, probabilities).reduce(0.0) { sum, cell in
                let expected = total * cell.1
                return sum + (Double(cell.0) - expected) * (Double(cell.0) - expected) / expected
            }
            degreesOfFreedom = counts.count - 1
        }

        /// Integer draws from a pmf symmetric about 0 and falling away from it: one cell per value in −b…b, where b is
        /// the last value expected at least 20 times, and one pooled cell for each tail beyond.
        init(draws: [Int64], pmf: (Int64) -> Double) {
            let n = Double(draws.count)
            var reach: Int64 = 0
            while n * pmf(reach + 1) >= 20 { reach += 1 }
            var probabilities = (-reach...reach).map(pmf)
            let tail = max(0, (1 - probabilities.reduce(0, +)) / 2)
            var counts = [Int](repeating: 0, count: probabilities.count)
            var below = 0
            var above = 0
            for y in draws {
                if y < -reach { below += 1 } else if y > reach { above += 1 } else { counts[Int(y + reach)] += 1 }
            }
            if n * tail >= 5 {
                counts = [below] + counts + [above]
                probabilities = [tail] + probabilities + [tail]
            } else {
                // Tails too thin to test on their own are folded into the outermost cells.
                counts[0] += below
                counts[counts.count - 1] += above
                probabilities[0] += tail
                probabilities[probabilities.count - 1] += tail
            }
            self.init(counts: counts, probabilities: probabilities)
        }

        var limit: Double {
            let k = Double(degreesOfFreedom)
            let z = PrivacyNoiseTests.z
            return k * pow(1 - 2 / (9 * k) + z * (2 / (9 * k)).squareRoot(), 3)
        }

        var passes: Bool { statistic <= limit }

        var description: String {
            "χ² = \(String(format: "%.1f", statistic)) on \(degreesOfFreedom) degrees of freedom (limit \(String(format: "%.1f", limit)))"
        }
    }
}
