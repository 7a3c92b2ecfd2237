import Logging
import PostgresNIO

/// Runs `work` with a connected pool for one-off commands (`d4h migrate`, `seed`, …), then shuts it down.
/// Their statements run without the server's time bounds (`DatabaseLimits.unbounded`).
package func withDatabase<T: Sendable>(
    url: String, logger: Logger, limits: DatabaseLimits = .unbounded, _ work: @escaping @Sendable (DatabasePool) async throws -> T
) async throws -> T {
    // The pool waits for `run()` before its first lease; PostgresNIO's background logger reports only
    // errors all the same, as a command has no one to read its warnings.
    var backgroundLogger = logger
    backgroundLogger.logLevel = .error
    // Of several hosts (a replicated database), the one the URL asks for; a command does not wait for a failover.
    let databaseURL = try DatabaseURL(url, severalHosts: .readWrite)
    guard let host = await HostSelection(url: databaseURL, logger: logger).select() else {
        throw DatabaseHostMissing(url: databaseURL)
    }
    let client = PostgresClient(
        configuration: databaseURL.clientConfiguration(limits: limits, host: host),
        backgroundLogger: PostgresClientLog.logger(forwardingTo: backgroundLogger))
    let pool = DatabasePool(client: client, leaseTimeout: limits.leaseTimeout, logger: logger)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            await pool.run()
            return nil
        }
        defer { group.cancelAll() }
        return try await work(pool)
    }
}
