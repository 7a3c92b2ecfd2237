import Logging
import PostgresNIO

/// Whether this instance can serve: the database answers and its schema is what this build expects.
package struct Readiness: Sendable {
    package init(client: DatabasePool, migrations: [Migration], availability: DatabaseAvailability) {
        self.client = client
        self.migrations = migrations
        self.availability = availability
    }

    let client: DatabasePool
    let migrations: [Migration]
    /// The watchdog's view: when it already knows the database is down, say so at once instead of
    /// waiting out the probe's timeout on the pool.
    let availability: DatabaseAvailability

    package enum State: Sendable, Equatable {
        case ready(schemaVersion: Int)
        case databaseUnreachable
        case schemaNotCurrent(String)
    }

    package func check(logger: Logger) async -> State {
        guard availability.isReachable else { return .databaseUnreachable }
        let migrator = Migrator(client: client, migrations: migrations, logger: logger)
        do {
            // Bounded: a database that does not answer must not hang the probe.
            try await withTimeout(seconds: 3) { try await migrator.requireCurrent() }
            return .ready(schemaVersion: migrations.last?.version ?? 0)
        } catch let error as MigrationError {
            return .schemaNotCurrent(error.description)
        } catch {
            return .databaseUnreachable
        }
    }
}
