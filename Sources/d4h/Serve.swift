import ArgumentParser
import Broker
import Configuration
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Dispatch

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API. Every flag falls back to its environment variable.")

    @Option(help: "DATABASE_URL") var databaseURL: String?
    @Option(help: "HTTP_HOST (default 127.0.0.1)") var httpHost: String?
    @Option(help: "HTTP_PORT (default 8080)") var httpPort: Int?
    @Option(help: "PUBLIC_URL, used in mailed links") var publicURL: String?
    @Option(help: "MAIL_TRANSPORT: file, sendmail or log") var mailTransport: String?
    @Option(help: "MAIL_DIRECTORY for MAIL_TRANSPORT=file") var mailDirectory: String?
    @Option(help: "GROUP_MIN_COHORT (default 1000)") var groupMinCohort: Int?
    @Option(help: "GROUP_RESULTS_REFRESH_INTERVAL: seconds between recomputations of live group subscriptions (default 3600, 0 = off)")
    var groupResultsRefreshInterval: Int?
    @Option(help: "SESSION_TTL in seconds (default 86400)") var sessionTTL: Int?
    @Option(help: "WEBHOOK_ALLOW_PRIVATE (default false)") var webhookAllowPrivate: Bool?
    @Option(help: "LOG_LEVEL (default info)") var logLevel: String?
    @Option(help: "TLS_CERTIFICATE: PEM certificate chain; serve HTTPS (TLS 1.2+) without a proxy (needs --tls-key)")
    var tlsCertificate: String?
    @Option(help: "TLS_KEY: the certificate's PEM private key (needs --tls-certificate)") var tlsKey: String?
    @Option(help: "RATE_LIMIT_UPLOADS_PER_MINUTE per account (default 120, 0 = off)") var rateLimitUploadsPerMinute: Int?
    @Option(help: "RATE_LIMIT_IMPORTS_PER_HOUR per account (default 10, 0 = off)") var rateLimitImportsPerHour: Int?
    @Option(help: "RATE_LIMIT_DOWNLOADS_PER_MINUTE per account (default 120, 0 = off)") var rateLimitDownloadsPerMinute: Int?
    @Option(help: "RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE per account (default 30, 0 = off)") var rateLimitGroupRequestsPerMinute: Int?
    @Option(help: "DATABASE_POOL_SIZE: pooled connections (default 20)") var databasePoolSize: Int?
    @Option(help: "DATABASE_POOL_TIMEOUT: seconds to wait for a pooled connection before a 503 (default 5)") var databasePoolTimeout: Int?
    @Option(help: "DATABASE_STATEMENT_TIMEOUT: seconds one statement may run (default 30, 0 = no limit)") var databaseStatementTimeout: Int?
    @Option(help: "DATABASE_LOCK_TIMEOUT: seconds a statement may wait for a lock (default 5, 0 = no limit)") var databaseLockTimeout: Int?
    @Option(help: "GROUP_EVALUATION_CONCURRENCY: group evaluation steps at once (default 2)") var groupEvaluationConcurrency: Int?
    @Option(help: "GROUP_EVALUATION_QUEUE_TIMEOUT: seconds to wait for an evaluation slot before a 503 (default 30)")
    var groupEvaluationQueueTimeout: Int?
    @Option(help: "DOWNLOAD_STALL_TIMEOUT: seconds a download waits for a client that takes no more (default 20)") var downloadStallTimeout: Int?
    @Option(help: "IMPORT_BACKGROUND_BYTES: Apple Health uploads larger than this run as background jobs (default 8388608)")
    var importBackgroundBytes: Int?
    @Option(help: "TRUSTED_PROXIES: comma-separated proxy addresses/CIDRs whose X-Forwarded-For names the client (default none)")
    var trustedProxies: String?
    @Option(help: "LOGIN_ACCOUNT_FREE_ATTEMPTS: failed password checks per account before growing delays (default 5)")
    var loginAccountFreeAttempts: Int?
    @Option(help: "LOGIN_ADDRESS_MAX_FAILURES: failed logins per client address in 15 minutes before a 15-minute block (default 100)")
    var loginAddressMaxFailures: Int?
    @Option(help: "ACTIVATION_EXPIRY_HOURS: unactivated accounts are deleted after this many hours, freeing their email and fiscal code/VAT (default 48)")
    var activationExpiryHours: Int?
    @Option(help: "PENDING_REQUEST_EXPIRY_DAYS: days a single request stays pending unanswered before it expires (default 30)")
    var pendingRequestExpiryDays: Int?

    /// Flags, as the environment variables they stand for, so one reader resolves both (flags first).
    var flagsAsEnvironment: [String: String] {
        let pairs: [(String, String?)] = [
            ("DATABASE_URL", databaseURL), ("HTTP_HOST", httpHost), ("HTTP_PORT", httpPort.map(String.init)),
            ("PUBLIC_URL", publicURL), ("MAIL_TRANSPORT", mailTransport), ("MAIL_DIRECTORY", mailDirectory),
            ("GROUP_MIN_COHORT", groupMinCohort.map(String.init)), ("SESSION_TTL", sessionTTL.map(String.init)),
            ("GROUP_RESULTS_REFRESH_INTERVAL", groupResultsRefreshInterval.map(String.init)),
            ("WEBHOOK_ALLOW_PRIVATE", webhookAllowPrivate.map(String.init)), ("LOG_LEVEL", logLevel),
            ("TLS_CERTIFICATE", tlsCertificate), ("TLS_KEY", tlsKey),
            ("RATE_LIMIT_UPLOADS_PER_MINUTE", rateLimitUploadsPerMinute.map(String.init)),
            ("RATE_LIMIT_IMPORTS_PER_HOUR", rateLimitImportsPerHour.map(String.init)),
            ("RATE_LIMIT_DOWNLOADS_PER_MINUTE", rateLimitDownloadsPerMinute.map(String.init)),
            ("RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE", rateLimitGroupRequestsPerMinute.map(String.init)),
            ("DATABASE_POOL_SIZE", databasePoolSize.map(String.init)), ("DATABASE_POOL_TIMEOUT", databasePoolTimeout.map(String.init)),
            ("DATABASE_STATEMENT_TIMEOUT", databaseStatementTimeout.map(String.init)),
            ("DATABASE_LOCK_TIMEOUT", databaseLockTimeout.map(String.init)),
            ("GROUP_EVALUATION_CONCURRENCY", groupEvaluationConcurrency.map(String.init)),
            ("GROUP_EVALUATION_QUEUE_TIMEOUT", groupEvaluationQueueTimeout.map(String.init)),
            ("DOWNLOAD_STALL_TIMEOUT", downloadStallTimeout.map(String.init)),
            ("IMPORT_BACKGROUND_BYTES", importBackgroundBytes.map(String.init)),
            ("TRUSTED_PROXIES", trustedProxies),
            ("LOGIN_ACCOUNT_FREE_ATTEMPTS", loginAccountFreeAttempts.map(String.init)),
            ("LOGIN_ADDRESS_MAX_FAILURES", loginAddressMaxFailures.map(String.init)),
            ("ACTIVATION_EXPIRY_HOURS", activationExpiryHours.map(String.init)),
            ("PENDING_REQUEST_EXPIRY_DAYS", pendingRequestExpiryDays.map(String.init)),
        ]
        return Dictionary(uniqueKeysWithValues: pairs.compactMap { name, value in value.map { (name, $0) } })
    }

    func run() async throws {
        let reader = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: flagsAsEnvironment, secretsSpecifier: .specific(["DATABASE_URL"])),
            EnvironmentVariablesProvider(secretsSpecifier: .specific(["DATABASE_URL"])),
        ])
        let configuration: BrokerConfiguration
        do { configuration = try BrokerConfiguration(reader: reader) } catch { fail("\(error)") }
        let logger = makeLogger(level: configuration.logLevel)
        do {
            try await withDatabase(url: configuration.databaseURL, logger: logger) { client in
                try await Migrator(client: client, migrations: try Migration.bundled(), logger: logger).requireCurrent()
            }
        } catch let error as MigrationError {
            fail("refusing to start: \(error)")
        } catch {
            fail("refusing to start: cannot check the database schema: \(String(reflecting: error))")
        }
        raiseOpenFileLimit(logger: logger)
        let app: any ApplicationProtocol
        do {
            app = try await buildApplication(configuration: configuration, logger: logger)
        } catch let error as ConfigurationError {
            fail("\(error)")  // an unreadable TLS file, named by its variable
        }
        logger.info("serving", metadata: ["url": "\(configuration.scheme)://\(configuration.httpHost):\(configuration.httpPort)"])
        try await runWithBoundedShutdown(app, logger: logger)
    }
}

/// Runs the server until SIGTERM or SIGINT, then stops it within `ShutdownDeadline.total` whatever is stuck.
///
/// First a graceful shutdown: no new connections, requests under way finish, background loops stop, and the
/// pool closes last. After `graceful` the work still under way is cancelled (waits for a connection, a slot
/// or a timer end at once). A statement PostgresNIO has stranded cannot be cancelled, so at `total` the
/// process exits anyway: PostgreSQL rolls back every transaction it had open, so nothing half-written stays.
func runWithBoundedShutdown(_ app: some ApplicationProtocol, logger: Logger) async throws {
    ShutdownDeadline.arm(logger: logger)
    var configuration = ServiceGroupConfiguration(services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    configuration.maximumGracefulShutdownDuration = ShutdownDeadline.graceful
    let group = ServiceGroup(configuration: configuration)
    try await group.run()
}

enum ShutdownDeadline {
    static let graceful: Duration = .seconds(10)
    static let total: Duration = .seconds(14)

    /// On the first SIGTERM or SIGINT, starts the clock that ends the process at `total`.
    static func arm(logger: Logger) {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)  // delivered to the dispatch sources (ServiceLifecycle's and this one) instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(total.components.seconds))) {
                    logger.error("shutdown deadline passed: exiting with work still under way (its transactions roll back)")
                    fflush(nil)  // every open output stream, so the line above is not lost
                    _exit(1)
                }
            }
            source.resume()
            armed.append(source)
        }
    }

    /// Kept alive for the life of the process.
    nonisolated(unsafe) private static var armed: [any DispatchSourceSignal] = []
}

/// Every connection is a file descriptor, and the usual soft limit (1,024) would turn clients away long
/// before memory or CPU run short: take the hard limit the system allows this process.
func raiseOpenFileLimit(logger: Logger) {
    var limit = rlimit()
    guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    let before = limit.rlim_cur
    limit.rlim_cur = limit.rlim_max
    if setrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 {
        logger.info("raised the open-file limit", metadata: ["from": "\(before)", "to": "\(limit.rlim_max)"])
    }
}

#if canImport(Glibc)
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
private let RLIMIT_NOFILE_VALUE = RLIMIT_NOFILE
#endif
