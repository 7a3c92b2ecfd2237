import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// Probes the database once a second over a connection of its own (not the pool's, whose queue is exactly
/// what hangs when the database is down) and keeps `DatabaseAvailability` current.
///
/// A refused or broken connection (or a server shutting down) marks the database unreachable at once; a
/// probe that merely times out (connecting or querying) must do so `timeoutsForOutage` times in a row, so
/// slow answers under heavy load do not turn clients away; any other error (the server answered, but
/// refused the probe) changes nothing.
package struct DatabaseWatchdog: Service {
    package init(
        configuration: PostgresConnection.Configuration, availability: DatabaseAvailability, logger: Logger, interval: Duration = .seconds(1),
        probeTimeout: Double = 3
    ) {
        self.configuration = configuration
        self.availability = availability
        self.logger = logger
        self.interval = interval
        self.probeTimeout = probeTimeout
    }

    let configuration: PostgresConnection.Configuration
    let availability: DatabaseAvailability
    let logger: Logger
    var interval: Duration = .seconds(1)
    var probeTimeout: Double = 3
    /// A database that is merely slow (a loaded machine: the full test suite creates dozens of databases
    /// at once) must not be taken for one that is down.
    var timeoutsForOutage = 3

    package func run() async throws {
        var connection: PostgresConnection?
        var timeoutsInARow = 0
        var connectionID = 0
        defer { if let connection { Task { try? await connection.close() } } }
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                if connection == nil || connection?.isClosed == true {
                    // Bounded by the configuration's connect timeout. (Not by `withTimeout`: a connection that
                    // completes after the timer would be dropped unclosed.)
                    connectionID += 1
                    connection = try await PostgresConnection.connect(configuration: configuration, id: connectionID, logger: logger)
                }
                try await probe(connection!)
                timeoutsInARow = 0
                if !availability.isReachable { logger.notice("database reachable again") }
                availability.markReachable()
            } catch let error where Self.isTimeout(error) {
                if let stale = connection { Task { try? await stale.close() } }
                connection = nil
                timeoutsInARow += 1
                if timeoutsInARow >= timeoutsForOutage {
                    unreachable(because: "\(timeoutsInARow) probes in a row timed out")
                }
            } catch {
                timeoutsInARow = 0
                if let stale = connection { Task { try? await stale.close() } }
                connection = nil
                // Only an outage counts: a database that answers "too many clients" (53300) or rejects the
                // probe's login is up, and turning every client away with 503 would make that worse.
                if PostgresErrors.isConnectionFailure(error) {
                    unreachable(because: String(reflecting: error))
                } else {
                    logger.warning("database probe failed", metadata: ["error": "\(String(reflecting: error))"])
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Our probe's timeout, or the connection's connect timeout.
    static func isTimeout(_ error: any Error) -> Bool {
        if error is TimedOut { return true }
        if let psql = error as? PSQLError, psql.code == .connectionError, let channel = psql.underlying as? ChannelError,
            case .connectTimeout = channel
        {
            return true
        }
        return false
    }

    /// `SELECT 1`, given `probeTimeout` seconds. The query runs in a task of its own and is abandoned on
    /// timeout (the caller then closes the connection): PostgresNIO can strand a query on a connection the
    /// server killed, and a probe that waited for it would stop watching altogether.
    private func probe(_ connection: PostgresConnection) async throws {
        let first = FirstOutcome<Void>()
        let logger = logger
        let probeTimeout = probeTimeout
        try await withCheckedThrowingContinuation { continuation in
            first.install(continuation)
            Task {
                do {
                    _ = try await connection.query("SELECT 1", logger: logger).collect()
                    first.resume(with: .success(()))
                } catch {
                    first.resume(with: .failure(error))
                }
            }
            Task {
                try? await Task.sleep(for: .seconds(probeTimeout))
                first.resume(with: .failure(TimedOut()))
            }
        }
    }

    private func unreachable(because reason: String) {
        if availability.isReachable { logger.error("database unreachable", metadata: ["reason": "\(reason)"]) }
        availability.markUnreachable()
    }
}
