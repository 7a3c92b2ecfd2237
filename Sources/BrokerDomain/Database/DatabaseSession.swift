import Logging
import PostgresNIO

/// Runs `work` with a connected pool for one-off commands (`d4h migrate`, `seed`, …), then shuts it down.
/// Their statements run without the server's time bounds (`DatabaseLimits.unbounded`).
package func withDatabase<T: Sendable>(
    url: String, logger: Logger, limits: DatabaseLimits = .unbounded, _ work: @escaping @Sendable (DatabasePool) async throws -> T
) async throws -> T {
    // A command queries as soon as it starts, racing `run()`; PostgresNIO warns about that harmless
    // race on its background logger, so that logger reports only errors.
    var backgroundLogger = logger
    backgroundLogger.logLevel = .error
    let client = PostgresClient(configuration: try DatabaseURL(url).clientConfiguration(limits: limits), backgroundLogger: backgroundLogger)
    let pool = DatabasePool(client: client, leaseTimeout: limits.leaseTimeout, logger: logger)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            await client.run()
            return nil
        }
        defer { group.cancelAll() }
        return try await work(pool)
    }
}
