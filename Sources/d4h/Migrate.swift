import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Foundation

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply the schema migrations the database lacks (refuses if an applied file was edited).")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "Read NNNN_name.sql files from this directory instead of the ones built into d4h.")
    var schemaDirectory: String?

    func run() async throws {
        let logger = makeLogger()
        let migrations: [Migration]
        do {
            migrations = try schemaDirectory.map { try Migration.load(from: URL(fileURLWithPath: $0)) } ?? Migration.bundled()
        } catch { fail("\(error)") }
        let url = try database.resolved()
        do {
            let applied = try await withDatabase(url: url, logger: logger) { client in
                try await Migrator(client: client, migrations: migrations, logger: logger).migrate()
            }
            let latest = migrations.last?.version ?? 0
            print(
                applied.isEmpty
                    ? "Schema is current (version \(latest))."
                    : "Applied \(applied.count) migration(s); schema is at version \(latest).")
        } catch let error as MigrationError {
            fail("\(error)")
        }
    }
}
