import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import Foundation

extension Bench {
    struct AppleHealthParse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apple-health-parse",
            abstract: "Parse an Apple Health export without storing it: the baseline of the import benchmark.")

        @Argument(help: "export.xml or export.zip") var file: String

        func run() async throws {
            let start = ContinuousClock.now
            let reader = try AppleHealthExportReader(contentsOf: URL(fileURLWithPath: file))
            var parser = AppleHealthParser(now: Date())
            var samples = 0
            while let chunk = try reader.next() { samples += try parser.feed(chunk).count }
            try parser.finish()
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("parsed \(samples) samples in \(String(format: "%.2f", seconds)) s")
        }
    }

    struct AppleHealthFile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apple-health-file", abstract: "Write a synthetic Apple Health export.xml of about the given size.")

        @Option(help: "Approximate size in MB.") var megabytes = 1024
        @Option(help: "Generator seed.") var seed: UInt64 = 1
        @Argument(help: "Where to write it.") var file: String

        func run() async throws {
            let bytes = try AppleHealthExportGenerator.write(
                to: URL(fileURLWithPath: file), approximateBytes: megabytes * 1_000_000, seed: seed)
            print("wrote \(bytes) bytes to \(file)")
        }
    }
}
