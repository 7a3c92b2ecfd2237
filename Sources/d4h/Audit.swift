import ArgumentParser
import Broker
import Foundation

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check the audit log.", subcommands: [Verify.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute the audit log's hash chain; exit 1 with the first broken sequence number if it does not verify.")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let result = try await withDatabase(url: try database.resolved(), logger: logger) { client in
                try await AuditTrail(client: client).verify(logger: logger)
            }
            switch result {
            case .valid(let events, let lastHash):
                print("The audit log verifies: \(events) events, last hash \(lastHash).")
            case .broken(let seq):
                fail("The audit log is broken at sequence number \(seq): its hash, its link to the previous event or its numbering does not verify.")
            }
        }
    }
}
