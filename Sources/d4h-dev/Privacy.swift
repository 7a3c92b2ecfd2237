import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import Foundation

/// `d4h privacy`: the differential-privacy module's tools.
struct Privacy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Differential-privacy tools.", subcommands: [Noise.self])

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
}
