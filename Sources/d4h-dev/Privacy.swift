import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import Foundation

/// `d4h privacy`: the differential-privacy module's tools.
struct Privacy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Differential-privacy tools.", subcommands: [Noise.self, Exponential.self, Quantile.self])

    /// Prints raw draws so the sampler can be checked against scipy and OpenDP (scripts/privacy-noise-check.py).
    struct Noise: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print draws from the discrete Gaussian N_Z(0, variance), one integer per line.",
            discussion: """
                Draws come from the operating system's CSPRNG, as in a release, unless --seed is given; a seed gives \
                the same draws on every run and machine (a non-cryptographic generator: for checking the sampler only).
                """)

        @Option(help: "The variance σ², a whole number from 1 to 2^58.")
        var variance: UInt64
        @Option(help: "How many draws to print.")
        var count: Int
        @Option(help: "Seed a deterministic generator instead of the CSPRNG.")
        var seed: UInt64?

        func validate() throws {
            guard (1...(UInt64(1) << 58)).contains(variance) else {
                throw ValidationError("--variance must be a whole number from 1 to 2^58 (288230376151711744)")
            }
            guard count >= 0 else { throw ValidationError("--count must be 0 or more") }
        }

        func run() throws {
            let source: any NoiseSource = seed.map { SeededNoise(seed: $0) } ?? SecureNoise()
            // Written in blocks: a line at a time through FileHandle would be a system call per draw.
            var block = ""
            for index in 0..<count {
                block += String(source.discreteGaussian(variance: variance))
                block += "\n"
                if index % 4096 == 4095 || index == count - 1 {
                    FileHandle.standardOutput.write(Data(block.utf8))
                    block = ""
                }
            }
        }
    }

    /// Prints draws of the exponential mechanism, for scripts/privacy-noise-check.py.
    struct Exponential: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print draws of the exponential mechanism: indices into --scores, one per line.",
            discussion: """
                Index i is drawn with probability ∝ exp(−(scoreᵢ − min score) · numerator / denominator). With --seed,                 `ExponentialMechanism.sample` on a deterministic generator; without, `SecureNoise` as in a release.
                """)

        @Option(help: "The candidates' scores, comma-separated whole numbers.")
        var scores: String
        @Option(help: "The rate's numerator (positive).")
        var numerator: UInt64
        @Option(help: "The rate's denominator (positive).")
        var denominator: UInt64
        @Option(help: "How many draws to print.")
        var count: Int
        @Option(help: "Seed a deterministic generator instead of the CSPRNG.")
        var seed: UInt64?

        var scoreValues: [UInt64] { scores.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) } }

        func validate() throws {
            guard !scoreValues.isEmpty, scoreValues.count == scores.split(separator: ",").count else {
                throw ValidationError("--scores must be whole numbers, comma-separated")
            }
            guard numerator > 0, denominator > 0 else { throw ValidationError("--numerator and --denominator must be positive") }
            guard count >= 0 else { throw ValidationError("--count must be 0 or more") }
        }

        func run() throws {
            let scores = scoreValues
            var generator = SeededRandom(seed: seed ?? 0)
            let secure = SecureNoise()
            writeLines(count) {
                seed == nil
                    ? secure.exponentialMechanism(scores: scores, numerator: numerator, denominator: denominator)
                    : ExponentialMechanism.sample(scores: scores, numerator: numerator, denominator: denominator, using: &generator)
            }
        }
    }

    /// Prints draws of one percentile of a histogram, for scripts/privacy-noise-check.py.
    struct Quantile: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print draws of a cell's percentile by the quantile mechanism: candidate indices (0…bins), one per line.",
            discussion: """
                The cell's people on each candidate of a grid (--histogram), its percentile (10, 50 or 90) at a loss of \
                --rho-micro millionths of ρ, through `QuantileMechanism` as a release draws it (seeded, or `SecureNoise`).
                """)

        @Option(help: "People on each candidate, comma-separated.")
        var histogram: String
        @Option(help: "10, 50 or 90.")
        var percentile: Int
        @Option(help: "What the percentile costs, in millionths of ρ (positive).")
        var rhoMicro: Int64
        @Option(help: "How many draws to print.")
        var count: Int
        @Option(help: "Seed a deterministic generator instead of the CSPRNG.")
        var seed: UInt64?

        var bins: [Int64] { histogram.split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) } }

        func validate() throws {
            guard !bins.isEmpty, bins.count == histogram.split(separator: ",").count, bins.allSatisfy({ $0 >= 0 }) else {
                throw ValidationError("--histogram must be whole numbers of people, comma-separated")
            }
            guard [10, 50, 90].contains(percentile) else { throw ValidationError("--percentile must be 10, 50 or 90") }
            guard rhoMicro > 0 else { throw ValidationError("--rho-micro must be positive") }
            guard count >= 0 else { throw ValidationError("--count must be 0 or more") }
        }

        func run() throws {
            let source: any NoiseSource = seed.map { SeededNoise(seed: $0) } ?? SecureNoise()
            let (bins, tenths, rhoMicro) = (bins, percentile / 10, rhoMicro)
            writeLines(count) { QuantileMechanism.candidate(tenths: tenths, histogram: bins, rhoMicro: rhoMicro, noise: source)! }
        }
    }
}

/// `count` numbers from `next`, one a line, written in blocks: a line at a time through FileHandle would be a
/// system call per draw.
private func writeLines(_ count: Int, _ next: () -> Int) {
    var block = ""
    for index in 0..<count {
        block += String(next())
        block += "\n"
        if index % 4096 == 4095 || index == count - 1 {
            FileHandle.standardOutput.write(Data(block.utf8))
            block = ""
        }
    }
}
