import Foundation
import NIOSSL
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=…` URL, turned into a client configuration.
package struct DatabaseURL: Sendable, Equatable {
    package enum SSLMode: String, Sendable { case disable, prefer, require }

    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    package var sslMode: SSLMode

    package init(_ text: String) throws {
        guard let components = URLComponents(string: text),
            ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, !host.isEmpty,
            let username = components.user, !username.isEmpty
        else {
            throw ConfigurationError.invalid(
                "DATABASE_URL", "must look like postgres://user:password@host:port/database")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw ConfigurationError.invalid("DATABASE_URL", "names no database") }
        let modeText = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        guard let mode = SSLMode(rawValue: modeText) else {
            throw ConfigurationError.invalid("DATABASE_URL", "sslmode must be disable, prefer or require")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = username.removingPercentEncoding ?? username
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        self.sslMode = mode
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
        components.host = host
        components.port = port
        components.path = "/" + database
        components.queryItems = [URLQueryItem(name: "sslmode", value: sslMode.rawValue)]
        return components.string ?? ""
    }

    /// The pool's configuration, with `limits` as its size and each connection's session bounds.
    package func clientConfiguration(limits: DatabaseLimits) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        // Fail fast when the database is down instead of queueing requests for long.
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.maximumConnections = limits.poolSize
        configuration.options.additionalStartupParameters = limits.startupParameters
        return configuration
    }

    /// One connection outside the pool (the `DatabaseWatchdog`'s probe).
    package func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch sslMode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try .init(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try .init(configuration: .makeClientConfiguration()))
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(3)
        return configuration
    }
}
