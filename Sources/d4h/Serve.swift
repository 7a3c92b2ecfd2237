import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Configuration
import Dispatch
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API.",
        discussion: """
            Every setting is an environment variable and a flag of the same name: HTTP_PORT=9000 or \
            --http-port 9000 (the flag wins). The README's "Configuration" table lists them with their defaults.
            """)

    @Argument(parsing: .captureForPassthrough, help: "Settings as flags, for example --http-port 9000 --log-level debug")
    var settings: [String] = []

    func run() async throws {
        // The settings are passed through untouched, `--help` with them: answer it here.
        if settings.contains("--help") || settings.contains("-h") {
            print(Serve.helpMessage())
            return
        }
        let settingsRead = SettingsRead()
        let reader = ConfigReader(
            providers: [
                CommandLineArgumentsProvider(arguments: ["d4h"] + settings, secretsSpecifier: .specific(["--database-url"])),
                EnvironmentVariablesProvider(secretsSpecifier: .specific(["DATABASE_URL"])),
            ],
            accessReporter: settingsRead)
        let configuration: BrokerConfiguration
        do { configuration = try BrokerConfiguration(reader: reader) } catch { fail("\(error)") }
        // A mistyped flag would otherwise be ignored, and the server start with a default the operator
        // meant to change.
        if let unknown = settingsRead.unknownFlag(in: settings) {
            fail("\(unknown) is not a setting of d4h serve (see `d4h serve --help`)")
        }
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

/// Every connection is a file descriptor, and the usual soft limit (1,024) would turn clients away long
/// before memory or CPU run short: take the hard limit the system allows this process.
func raiseOpenFileLimit(logger: Logger) {
    var limit = rlimit()
    guard getrlimit(openFileLimitResource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    let before = limit.rlim_cur
    limit.rlim_cur = limit.rlim_max
    if setrlimit(openFileLimitResource, &limit) == 0 {
        logger.info("raised the open-file limit", metadata: ["from": "\(before)", "to": "\(limit.rlim_max)"])
    }
}

#if canImport(Glibc)
    private let openFileLimitResource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
    private let openFileLimitResource = RLIMIT_NOFILE
#endif
