import Foundation
import NIOSSL
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=…` URL, turned into a client configuration.
///
/// It may name several hosts, as libpq's multi-host form does (`postgres://u:p@h1:5432,h2:5433/db?
/// target_session_attrs=read-write`): the servers of one replicated database, a primary and its standbys.
/// The pool then connects to the one that `target_session_attrs` asks for and moves when that changes (a
/// failover: `DatabaseWatchdog`, `HostSelection`). PostgresNIO connects to one host, so the choice is ours.
package struct DatabaseURL: Sendable, Equatable {
    package enum SSLMode: String, Sendable { case disable, prefer, require }

    /// Every host the URL names, in its order (the order in which a writable one is looked for).
    package var hosts: [DatabaseHost]
    package var username: String
    package var password: String?
    package var database: String
    package var sslMode: SSLMode
    /// Which of the hosts will do (libpq's `target_session_attrs`; `any` by default, as libpq's).
    package var targetSessionAttributes: TargetSessionAttributes

    /// The first host: the only one of a single-host URL (`psql -h` in the benchmarks).
    package var host: String { hosts[0].host }
    package var port: Int { hosts[0].port }

    /// `variable` names the setting in errors; `severalHosts` is the `target_session_attrs` of a URL with
    /// several hosts that names none (libpq's default is `any`, which would let a server writing through
    /// `DATABASE_URL` settle on a standby: its callers pass `read-write`).
    package init(_ text: String, variable: String = "DATABASE_URL", severalHosts: TargetSessionAttributes = .any) throws {
        let shape = "must look like postgres://user:password@host:port/database (or host1:port1,host2:port2 for a replicated database)"
        // URLComponents takes one host, so the host list is cut out and read here; the rest (the user, the
        // password, the database and the query, with their percent-encoding) is read by URLComponents around
        // a placeholder host.
        guard let schemeEnd = text.range(of: "://") else { throw ConfigurationError.invalid(variable, shape) }
        let afterScheme = text[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        let hostListStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hostList = String(authority[hostListStart...])
        let placeholder = String(text[..<hostListStart]) + "placeholder" + String(text[authorityEnd...])
        guard let components = URLComponents(string: placeholder),
            ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let username = components.user, !username.isEmpty
        else {
            throw ConfigurationError.invalid(variable, shape)
        }
        let hosts = try hostList.split(separator: ",", omittingEmptySubsequences: false).map { try DatabaseHost(String($0), variable: variable) }
        guard !hosts.isEmpty else { throw ConfigurationError.invalid(variable, shape) }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw ConfigurationError.invalid(variable, "names no database") }
        let modeText = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        guard let mode = SSLMode(rawValue: modeText) else {
            throw ConfigurationError.invalid(variable, "sslmode must be disable, prefer or require")
        }
        let attributesText =
            components.queryItems?.first(where: { $0.name == "target_session_attrs" })?.value ?? (hosts.count > 1 ? severalHosts.rawValue : "any")
        guard let attributes = TargetSessionAttributes(rawValue: attributesText) else {
            throw ConfigurationError.invalid(
                "DATABASE_URL", "target_session_attrs must be one of \(TargetSessionAttributes.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.hosts = hosts
        self.username = username.removingPercentEncoding ?? username
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        self.sslMode = mode
        self.targetSessionAttributes = attributes
    }

    /// The same server and credentials, another database (tests create one database per suite).
    package func with(database: String) -> DatabaseURL {
        var copy = self
        copy.database = database
        return copy
    }

    /// Back to URL form (what `BrokerConfiguration.databaseURL` holds).
    package var text: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = username
        components.password = password
        components.host = "placeholder"
        components.path = "/" + database
        components.queryItems = [URLQueryItem(name: "sslmode", value: sslMode.rawValue)]
        if targetSessionAttributes != .any {
            components.queryItems?.append(URLQueryItem(name: "target_session_attrs", value: targetSessionAttributes.rawValue))
        }
        let hostList = hosts.map(\.description).joined(separator: ",")
        return (components.string ?? "").replacingOccurrences(of: "@placeholder/", with: "@\(hostList)/")
    }

    /// The pool's configuration for `host` (by default the first), with `limits` as its size and each
    /// connection's session bounds.
    package func clientConfiguration(limits: DatabaseLimits, host: DatabaseHost? = nil) -> PostgresClient.Configuration {
        let host = host ?? hosts[0]
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host.host, port: host.port, username: username, password: password, database: database, tls: tls)
        // Fail fast when the database is down instead of queueing requests for long.
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.maximumConnections = limits.poolSize
        configuration.options.additionalStartupParameters = limits.startupParameters
        return configuration
    }

    /// One connection to `host` (by default the first) outside the pool: the `DatabaseWatchdog`'s probe
    /// and `HostSelection`'s.
    package func connectionConfiguration(host: DatabaseHost? = nil) throws -> PostgresConnection.Configuration {
        let host = host ?? hosts[0]
        let tls: PostgresConnection.Configuration.TLS
        switch sslMode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try .init(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try .init(configuration: .makeClientConfiguration()))
        }
        var configuration = PostgresConnection.Configuration(
            host: host.host, port: host.port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(3)
        return configuration
    }
}
