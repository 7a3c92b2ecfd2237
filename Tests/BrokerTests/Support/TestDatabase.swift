import BrokerTestSupport
import Foundation
import Logging
import PostgresNIO

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Fresh databases for tests: a migrated template is built once per test run, and each test gets its own
/// copy (`CREATE DATABASE … TEMPLATE`), so tests run in parallel and never see each other's rows.
enum TestDatabase {
    static let logger: Logger = {
        var logger = Logger(label: "tests")
        logger.logLevel = .error
        return logger
    }()

    /// The test cluster's admin connection, from `make test` (`D4H_TEST_DATABASE_URL`).
    static var adminURL: DatabaseURL {
        get throws {
            guard let text = ProcessInfo.processInfo.environment["D4H_TEST_DATABASE_URL"] else {
                throw TestSetupError(
                    "D4H_TEST_DATABASE_URL is not set: run the tests with `make test`, which starts the test PostgreSQL")
            }
            return try DatabaseURL(text)
        }
    }

    /// `D4H_TEST_TEMPLATE` lets two checkouts run their tests against one cluster side by side.
    static let templateName = ProcessInfo.processInfo.environment["D4H_TEST_TEMPLATE"] ?? "d4h_template"

    /// Builds the migrated template once per process, whichever test asks first.
    private static let template = TemplateOnce()

    /// A new, empty (never migrated) database; dropped after `body`.
    static func withEmptyDatabase<T: Sendable>(_ body: (DatabaseURL) async throws -> T) async throws -> T {
        try await withDatabase(template: nil, body)
    }

    /// A new database with the current schema; dropped after `body`.
    static func withMigratedDatabase<T: Sendable>(_ body: (DatabaseURL) async throws -> T) async throws -> T {
        try await StallReport.step("building the migrated template") { try await template.ensure() }
        return try await withDatabase(template: templateName, body)
    }

    private static func withDatabase<T: Sendable>(template: String?, _ body: (DatabaseURL) async throws -> T) async throws -> T {
        let admin = try adminURL
        let name = "d4h_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let templateClause = template.map { " TEMPLATE \($0)" } ?? ""
        try await StallReport.step("creating the test database") {
            try await runAdmin(admin, "CREATE DATABASE \(name)\(templateClause)")
        }
        let dropping = {
            try? await StallReport.step("dropping the test database") { try await runAdmin(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        }
        do {
            let result = try await body(admin.with(database: name))
            await dropping()
            return result
        } catch {
            await dropping()
            throw error
        }
    }

    /// Runs SQL text (identifiers only, never user input) on the admin database.
    static func runAdmin(_ url: DatabaseURL, _ sql: String) async throws {
        _ = try await withClient(url) { client in
            try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
    }

    /// A connected client to `url` for the duration of `body` (the product's own `withDatabase`).
    static func withClient<T: Sendable>(_ url: DatabaseURL, _ body: @escaping @Sendable (DatabasePool) async throws -> T)
        async throws -> T
    {
        try await BrokerDomain.withDatabase(url: url.text, logger: logger, body)
    }

    fileprivate static func buildTemplate() async throws {
        let admin = try adminURL
        try await runAdmin(admin, "DROP DATABASE IF EXISTS \(templateName) WITH (FORCE)")
        try await runAdmin(admin, "CREATE DATABASE \(templateName)")
        try await withClient(admin.with(database: templateName)) { client in
            try await Migrator(client: client, migrations: try Migration.bundled(), logger: logger).migrate()
        }
    }
}

/// Runs `buildTemplate` exactly once, however many tests race to it.
private actor TemplateOnce {
    private var task: Task<Void, any Error>?

    func ensure() async throws {
        if task == nil { task = Task { try await TestDatabase.buildTemplate() } }
        try await task!.value
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
