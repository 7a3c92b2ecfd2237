import ArgumentParser
import Broker
import Foundation
import PostgresNIO

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import data into a person's account.", subcommands: [AppleHealth.self])

    struct AppleHealth: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apple-health",
            abstract: "Import an Apple Health export.xml or export.zip for the person with this email (all or nothing).")

        @OptionGroup var database: DatabaseOptions
        @Option(help: "The person's email.") var email: String
        @Argument(help: "export.xml or export.zip") var file: String

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.isReadableFile(atPath: url.path) else { fail("cannot read \(file)") }
            do {
                let result = try await withDatabase(url: try database.resolved(), logger: logger) { client in
                    guard let record = try await AccountStore(client: client).loginRecord(email: email.lowercased(), logger: logger),
                        record.role == .user
                    else { throw ValidationError("no person (role user) has the email \(email)") }
                    return try await AppleHealthImport(client: client).run(file: url, format: nil, userID: record.accountID, logger: logger)
                }
                print("Imported \(result.accepted) samples (\(result.duplicates) already there).")
                for (identifier, count) in result.skipped.sorted(by: { $0.value > $1.value }) {
                    print("  skipped \(count) × \(identifier)")
                }
            } catch let error as SampleError {
                fail(error.problem.detail)
            }
        }
    }
}
