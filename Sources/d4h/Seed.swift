import ArgumentParser
import Broker
import Foundation

struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the demo accounts of Seeds/demo-accounts.json (active), and print their credentials.")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "The demo accounts file.") var file = "Seeds/demo-accounts.json"

    func run() async throws {
        let logger = makeLogger(level: .warning)
        let seed: DemoSeed
        do { seed = try DemoSeed.load(from: URL(fileURLWithPath: file)) } catch { fail("cannot read \(file): \(error)") }
        let outcomes = try await withDatabase(url: try database.resolved(), logger: logger) { client in
            try await seed.apply(client: client, logger: logger)
        }
        print("Demo accounts (all active):")
        for outcome in outcomes {
            let role = outcome.role.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
            print("  \(role) \(outcome.email)  password: \(outcome.password)\(outcome.created ? "" : "  (already there)")")
        }
    }
}
