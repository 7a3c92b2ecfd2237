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
///
/// It also follows a failover. The probe asks the pool's host whether it is still what the URL's
/// `target_session_attrs` asks for (a primary that was demoted answers that it is a standby now), and when
/// the host is lost or no longer will do, `HostSelection` looks for the one that will among the URL's hosts
/// (the promoted standby) and the pool moves there. Until then every request is answered 503.
package struct DatabaseWatchdog: Service {
    package init(
        url: DatabaseURL, pool: DatabasePool, availability: DatabaseAvailability, logger: Logger, interval: Duration = .seconds(1),
        probeTimeout: Double = 3
    ) {
        self.url = url
        self.pool = pool
        self.availability = availability
        self.logger = logger
        self.interval = interval
        self.probeTimeout = probeTimeout
    }

    let url: DatabaseURL
    let pool: DatabasePool
    let availability: DatabaseAvailability
    let logger: Logger
    var interval: Duration = .seconds(1)
    var probeTimeout: Double = 3
    /// A database that is merely slow (a loaded machine: the full test suite creates dozens of databases
    /// at once) must not be taken for one that is down.
    var timeoutsForOutage = 3

    package func run() async throws {
        var connection: PostgresConnection?
        var connectedHost: DatabaseHost?
        var timeoutsInARow = 0
        var connectionID = 0
        defer { if let connection { Task { try? await connection.close() } } }
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let host = pool.host ?? url.hosts[0]
            if host != connectedHost, let stale = connection {
                Task { try? await stale.close() }
                connection = nil
            }
            var lookElsewhere = false
            do {
                if connection == nil || connection?.isClosed == true {
                    // Bounded by the configuration's connect timeout. (Not by `withTimeout`: a connection that
                    // completes after the timer would be dropped unclosed.)
                    connectionID += 1
                    connection = try await PostgresConnection.connect(
                        configuration: try url.connectionConfiguration(host: host), id: connectionID, logger: logger)
                    connectedHost = host
                }
                let state = try await probe(connection!)
                timeoutsInARow = 0
                if url.targetSessionAttributes == .preferStandby
                    || url.targetSessionAttributes.accepts(inRecovery: state.inRecovery, readOnly: state.readOnly)
                {
                    if !availability.isReachable { logger.notice("database reachable again", metadata: ["database.host": "\(host)"]) }
                    availability.markReachable()
                } else {
                    unreachable(because: "\(host) is a \(state) now, and DATABASE_URL asks for \(url.targetSessionAttributes.rawValue)")
                    lookElsewhere = true
                }
            } catch let error where Self.isTimeout(error) {
                if let stale = connection { Task { try? await stale.close() } }
                connection = nil
                timeoutsInARow += 1
                if timeoutsInARow >= timeoutsForOutage {
                    unreachable(because: "\(timeoutsInARow) probes in a row timed out")
                    lookElsewhere = true
                }
            } catch {
                timeoutsInARow = 0
                if let stale = connection { Task { try? await stale.close() } }
                connection = nil
                // Only an outage counts: a database that answers "too many clients" (53300) or rejects the
                // probe's login is up, and turning every client away with 503 would make that worse.
                if PostgresErrors.isConnectionFailure(error) {
                    unreachable(because: String(reflecting: error))
                    lookElsewhere = true
                } else {
                    logger.warning("database probe failed", metadata: ["error": "\(String(reflecting: error))"])
                }
            }
            // A host that will do, found now, is probed at once instead of a second later: the outage ends
            // with the probe that finds the new primary, not an interval after it.
            if lookElsewhere, url.hosts.count > 1, let found = await HostSelection(url: url, logger: logger).select(), found != host {
                pool.move(to: found)
                timeoutsInARow = 0
                continue
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

    /// The host's state (`HostState`), given `probeTimeout` seconds. The query is abandoned on timeout (the
    /// caller then closes the connection): PostgresNIO can strand a query on a connection the server killed,
    /// and a probe that waited for it would stop watching altogether.
    private func probe(_ connection: PostgresConnection) async throws -> HostState {
        let logger = logger
        return try await abandoning(after: probeTimeout) { try await HostState.read(from: connection, logger: logger) }
    }

    private func unreachable(because reason: String) {
        if availability.isReachable { logger.error("database unreachable", metadata: ["reason": "\(reason)"]) }
        availability.markUnreachable()
    }
}
