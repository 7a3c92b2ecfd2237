import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Foundation
import PostgresNIO

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import data into a person's account.", subcommands: [AppleHealth.self])

    struct AppleHealth: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apple-health",
            abstract: "Import an Apple Health export.xml or export.zip for the person with this email (all or nothing).",
            discussion: "Progress goes to standard error: one updating line on a terminal, a line every few seconds otherwise.")

        @OptionGroup var database: DatabaseOptions
        @Option(help: "The person's email.") var email: String
        @Argument(help: "export.xml or export.zip") var file: String

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.isReadableFile(atPath: url.path) else { fail("cannot read \(file)") }
            let meter = ProgressLine(terminal: isatty(STDERR_FILENO) == 1)
            do {
                let result = try await withDatabase(url: try database.resolved(), logger: logger) { client in
                    let record = try await client.withConnection {
                        try await AccountStore.loginRecord(email: email.lowercased(), on: $0, logger: logger)
                    }
                    guard let record, record.role == .user
                    else { throw ValidationError("no person (role user) has the email \(email)") }
                    return try await AppleHealthImport(client: client).run(
                        file: url, format: nil, userID: record.accountID, logger: logger, progress: { meter.show($0) })
                }
                meter.end()
                Self.report(result)
            } catch let error as SampleError {
                meter.end()
                fail(error.problem.detail)
            }
        }

        static func report(_ result: AppleHealthImport.Result) {
            print("Imported \(result.stored) new samples (\(result.alreadyThere) already there, \(result.repeatedInFile) repeated in the file).")
            if !result.skipped.isEmpty {
                print("Skipped \(result.skipped.reduce(0) { $0 + $1.count }) records:")
                for skipped in result.skipped { print("  \(skipped.count) × \(skipped.identifier) (\(skipped.reason))") }
            }
            if result.invalid.count > 0 {
                print("Invalid \(result.invalid.count) records (not imported):")
                for example in result.invalid.examples { print("  line \(example.line): \(example.identifier): \(example.reason)") }
                let more = result.invalid.count - result.invalid.examples.count
                if more > 0 { print("  … and \(more) more") }
            }
            if let zone = result.timeZone { print("Time zone in the export: \(zone)") }
        }
    }
}
