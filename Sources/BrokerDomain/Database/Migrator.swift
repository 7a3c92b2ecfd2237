import Logging
import PostgresNIO

/// Applies schema files in order and records each one's version and checksum.
package struct Migrator: Sendable {
    package let client: DatabasePool
    package let migrations: [Migration]
    package let logger: Logger

    package init(client: DatabasePool, migrations: [Migration], logger: Logger) {
        self.client = client
        self.migrations = migrations
        self.logger = logger
    }

    /// Applies every migration the database lacks, each in its own transaction; returns the versions applied.
    /// Refuses (before applying anything) if an applied file was edited since.
    @discardableResult
    package func migrate() async throws -> [Int] {
        try await client.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        let applied = try await appliedChecksums()
        try verify(applied: applied)
        var newlyApplied: [Int] = []
        for migration in migrations where applied[migration.version] == nil {
            do {
                guard try await apply(migration) else { continue }
            } catch {
                throw PostgresErrors.unwrapTransaction(error)
            }
            logger.info("applied migration", metadata: ["migration.version": "\(migration.version)", "migration.name": "\(migration.name)"])
            newlyApplied.append(migration.version)
        }
        return newlyApplied
    }

    /// Applies one migration and records it, in one transaction; false if another run applied it first.
    private func apply(_ migration: Migration) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            // Serialise concurrent `d4h migrate` runs; the loser sees the row and skips.
            try await connection.query("SELECT pg_advisory_xact_lock(4242)", logger: logger)
            let already = try await connection.query(
                "SELECT 1 FROM schema_migrations WHERE version = \(migration.version)", logger: logger
            ).collect()
            guard already.isEmpty else { return false }
            do {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            } catch let error as PSQLError {
                throw MigrationError.failed(
                    version: migration.version, name: migration.name,
                    message: error.serverInfo?[.message] ?? String(describing: error.code))
            }
            try await connection.query(
                """
                INSERT INTO schema_migrations (version, name, checksum)
                VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                """, logger: logger)
            return true
        }
    }

    /// Throws unless every known migration is applied unedited (what `d4h serve` requires to start).
    package func requireCurrent() async throws {
        let applied = try await appliedChecksums()
        // A newer server may already have migrated further (rolling upgrade): that is not "behind".
        try verify(applied: applied.filter { $0.key <= (migrations.last?.version ?? 0) })
        let missing = migrations.filter { applied[$0.version] == nil }
        if let expected = migrations.last?.version, !missing.isEmpty {
            throw MigrationError.schemaBehind(applied: applied.keys.max() ?? 0, expected: expected)
        }
    }

    /// version → checksum of what the database has applied (empty when it was never migrated).
    func appliedChecksums() async throws -> [Int: String] {
        let exists =
            try await client.query(
                "SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger
            ).collect().first?.decode(Bool.self) ?? false
        guard exists else { return [:] }
        var applied: [Int: String] = [:]
        for try await (version, checksum) in try await client.query(
            "SELECT version, checksum FROM schema_migrations", logger: logger
        ).decode((Int, String).self) {
            applied[version] = checksum
        }
        return applied
    }

    private func verify(applied: [Int: String]) throws {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for (version, checksum) in applied.sorted(by: { $0.key < $1.key }) {
            guard let migration = known[version] else { throw MigrationError.unknownAppliedVersion(version) }
            guard migration.checksum == checksum else {
                throw MigrationError.editedAfterApplying(version: version, name: migration.name)
            }
        }
    }
}
