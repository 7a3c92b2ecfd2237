import Logging
import PostgresNIO

/// Finds the server of a multi-host `DatabaseURL` that its `target_session_attrs` asks for: after a failover,
/// the standby that was promoted. libpq does this when it connects; PostgresNIO connects to the one host it
/// is given, so the pool asks this first and again whenever its host stops answering (`DatabaseWatchdog`).
package struct HostSelection: Sendable {
    package init(url: DatabaseURL, logger: Logger, probeTimeout: Duration = .seconds(3)) {
        self.url = url
        self.logger = logger
        self.probeTimeout = probeTimeout
    }

    let url: DatabaseURL
    let logger: Logger
    /// Each host's connection and query together; hosts are probed side by side, so a host that does not
    /// answer costs this once, not once per host.
    let probeTimeout: Duration

    /// The first host, in the URL's order, that will do (for `prefer-standby`, a standby, else the first that
    /// answers), or nil when none will right now. A single-host URL with `any` is its host without a probe.
    package func select() async -> DatabaseHost? {
        if url.hosts.count == 1, url.targetSessionAttributes == .any { return url.hosts[0] }
        let states = await withTaskGroup(of: (Int, HostState?).self) { group in
            for (index, host) in url.hosts.enumerated() {
                group.addTask { (index, await probe(host)) }
            }
            var states = [HostState?](repeating: nil, count: url.hosts.count)
            for await (index, state) in group { states[index] = state }
            return states
        }
        let attributes = url.targetSessionAttributes
        if let index = states.indices.first(where: {
            states[$0].map { attributes.accepts(inRecovery: $0.inRecovery, readOnly: $0.readOnly) } ?? false
        }) {
            return url.hosts[index]
        }
        if attributes == .preferStandby, let index = states.indices.first(where: { states[$0] != nil }) { return url.hosts[index] }
        logger.warning(
            "no database host will do",
            metadata: [
                "database.target_session_attrs": "\(attributes.rawValue)",
                "database.hosts": "\(zip(url.hosts, states).map { "\($0): \($1.map(\.description) ?? "no answer")" }.joined(separator: "; "))",
            ])
        return nil
    }

    /// `host`'s state, or nil when it cannot be reached within `probeTimeout`.
    package func probe(_ host: DatabaseHost) async -> HostState? {
        let configuration: PostgresConnection.Configuration
        do { configuration = try url.connectionConfiguration(host: host) } catch { return nil }
        let logger = logger
        let seconds = Double(probeTimeout.components.seconds) + Double(probeTimeout.components.attoseconds) / 1e18
        // A connection that completes after the deadline is closed by the abandoned work itself, never left open.
        return try? await abandoning(after: seconds) {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            defer { Task { try? await connection.close() } }
            return try await HostState.read(from: connection, logger: logger)
        }
    }
}

/// What a server says of itself: whether it is a standby, and whether its sessions are read-only by default.
package struct HostState: Sendable, Equatable, CustomStringConvertible {
    package var inRecovery: Bool
    package var readOnly: Bool

    package var description: String { inRecovery ? "standby" : readOnly ? "read-only primary" : "primary" }

    /// One statement on `connection` (a probe's own, never a pooled one).
    static func read(from connection: PostgresConnection, logger: Logger) async throws -> HostState {
        let rows = try await connection.query(
            "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'", logger: logger
        ).collect()
        guard let row = rows.first else { throw NoAnswer() }
        let (inRecovery, readOnly) = try row.decode((Bool, Bool).self)
        return HostState(inRecovery: inRecovery, readOnly: readOnly)
    }

    /// The statement returned no row (which PostgreSQL never does for it).
    private struct NoAnswer: Error {}
}
