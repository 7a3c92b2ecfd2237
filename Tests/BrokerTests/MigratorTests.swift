import BrokerTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Migrator")
struct MigratorTests {
    /// A directory of migration files for one test.
    final class SchemaDirectory: Sendable {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-schema-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func write(_ name: String, _ sql: String) throws {
            try sql.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        func migrations() throws -> [Migration] { try Migration.load(from: url) }
    }

    func migrator(_ client: DatabasePool, _ migrations: [Migration]) -> Migrator {
        Migrator(client: client, migrations: migrations, logger: TestDatabase.logger)
    }

    func versions(_ client: DatabasePool) async throws -> [Int] {
        try await client.query("SELECT version FROM schema_migrations ORDER BY applied_at, version", logger: TestDatabase.logger)
            .collect().map { try $0.decode(Int.self) }
    }

    @Test("applies files in version order, records each checksum, and is a no-op the second time")
    func appliesInOrder() async throws {
        let schema = try SchemaDirectory()
        // Written out of order: 0002 depends on 0001's table.
        try schema.write("0002_pets.sql", "CREATE TABLE pets (owner int REFERENCES owners (id));")
        try schema.write("0001_owners.sql", "CREATE TABLE owners (id int PRIMARY KEY);\n-- split\nINSERT INTO owners VALUES (1);")
        try schema.write("README.md", "not a migration")
        let migrations = try schema.migrations()
        #expect(migrations.map(\.version) == [1, 2])
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                #expect(try await migrator(client, migrations).migrate() == [1, 2])
                #expect(try await versions(client) == [1, 2])
                let checksums = try await client.query("SELECT checksum FROM schema_migrations ORDER BY version", logger: TestDatabase.logger)
                    .collect().map { try $0.decode(String.self) }
                #expect(checksums == migrations.map(\.checksum))
                #expect(try await migrator(client, migrations).migrate() == [])
                try await migrator(client, migrations).requireCurrent()
            }
        }
    }

    @Test("refuses to run when a migration that was applied has been edited since, and applies nothing")
    func refusesEditedFile() async throws {
        let schema = try SchemaDirectory()
        try schema.write("0001_owners.sql", "CREATE TABLE owners (id int PRIMARY KEY);")
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                try await migrator(client, try schema.migrations()).migrate()
                try schema.write("0001_owners.sql", "CREATE TABLE owners (id bigint PRIMARY KEY);")
                try schema.write("0002_pets.sql", "CREATE TABLE pets (id int);")
                await #expect(throws: MigrationError.editedAfterApplying(version: 1, name: "owners")) {
                    try await migrator(client, try schema.migrations()).migrate()
                }
                #expect(try await versions(client) == [1])
                await #expect(throws: MigrationError.editedAfterApplying(version: 1, name: "owners")) {
                    try await migrator(client, try schema.migrations()).requireCurrent()
                }
            }
        }
    }

    @Test("a failing migration is rolled back whole and reported with its file name")
    func failingMigrationRollsBack() async throws {
        let schema = try SchemaDirectory()
        try schema.write("0001_broken.sql", "CREATE TABLE half (id int);\n-- split\nCREATE TABLE half (id int);")
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                do {
                    try await migrator(client, try schema.migrations()).migrate()
                    Issue.record("a broken migration was applied")
                } catch let error as MigrationError {
                    guard case .failed(1, "broken", let message) = error else {
                        Issue.record("unexpected error \(error)")
                        return
                    }
                    #expect(message.contains("already exists"))
                    #expect(error.description.contains("0001_broken.sql"))
                }
                let half = try await client.query("SELECT to_regclass('half') IS NULL", logger: TestDatabase.logger)
                    .collect().first?.decode(Bool.self)
                #expect(half == true)
                #expect(try await versions(client) == [])
            }
        }
    }

    @Test("rejects files not named NNNN_name.sql, and duplicate versions")
    func rejectsBadFileNames() throws {
        let badName = try SchemaDirectory()
        try badName.write("first.sql", "SELECT 1;")
        #expect(throws: MigrationError.badFileName("first.sql")) { try badName.migrations() }
        let duplicate = try SchemaDirectory()
        try duplicate.write("0001_a.sql", "SELECT 1;")
        try duplicate.write("0001_b.sql", "SELECT 1;")
        #expect(throws: MigrationError.duplicateVersion(1)) { try duplicate.migrations() }
    }

    @Test("a database behind the build's schema is reported as behind")
    func staleDatabaseIsBehind() async throws {
        let bundled = try Migration.bundled()
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                await #expect(throws: MigrationError.schemaBehind(applied: 0, expected: bundled.last!.version)) {
                    try await migrator(client, bundled).requireCurrent()
                }
            }
        }
    }

    @Test("/health/ready answers 503 problem+json on a database whose schema is behind, 200 once migrated")
    func readinessFollowsTheSchema() async throws {
        try await TestDatabase.withEmptyDatabase { url in
            // Until the migration below, the background work finds no tables and says so at each pass.
            try await TestHarness.run(databaseURL: url, expectedLogs: ServerLog.unmigratedDatabase) { harness in
                let stale = try await harness.request(.get, "/health/ready")
                #expect(stale.status == .serviceUnavailable)
                #expect(stale.headers[.contentType] == "application/problem+json")
                #expect(String(buffer: stale.body).contains("d4h migrate"))
                #expect(try await harness.request(.get, "/health/live").status == .ok)

                try await TestDatabase.withClient(url) { client in
                    try await migrator(client, try Migration.bundled()).migrate()
                }
                #expect(try await harness.request(.get, "/health/ready").status == .ok)
            }
        }
    }

    @Test("the bundled schema splits into statements that each run alone")
    func bundledSchemaSplits() throws {
        for migration in try Migration.bundled() {
            for statement in migration.statements {
                // A statement holding two top-level statements would fail on the extended protocol.
                let body = statement.replacingOccurrences(of: #"\$\$[\s\S]*?\$\$"#, with: "", options: .regularExpression)
                let terminators = body.split(separator: "\n").filter {
                    !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") && $0.contains(";")
                }
                #expect(terminators.count <= 1, "\(migration.name): \(statement.prefix(80))")
            }
        }
    }
}
