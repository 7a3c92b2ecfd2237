import Logging

/// The logger a pool's PostgresNIO client writes to: the pool's own, less one warning that is no fault.
///
/// `DatabasePool.withConnection` lets a lease reach a client once its generation has started, which is just
/// before the client's own `run()` marks itself running; a lease that arrives in between is queued and served
/// as soon as `run()` begins, but PostgresNIO warns that `run()` "hasn't been called yet". A loaded machine
/// can stall the starting task right there while a server's first leases arrive (nine such warnings in one
/// test server's start during `make test`). That one message is logged at debug; everything else as it is.
enum PostgresClientLog {
    static func logger(forwardingTo logger: Logger) -> Logger {
        var client = Logger(label: logger.label) { _ in Handler(target: logger) }
        client.logLevel = logger.logLevel
        return client
    }

    static let notRunningYet = "hasn't been called yet"

    private struct Handler: LogHandler {
        var target: Logger
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level {
            get { target.logLevel }
            set { target.logLevel = newValue }
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let level = event.level == .warning && event.message.description.contains(PostgresClientLog.notRunningYet) ? .debug : event.level
            target.log(
                level: level, event.message, metadata: metadata.merging(event.metadata ?? [:]) { $1 }, source: event.source,
                file: event.file, function: event.function, line: event.line)
        }
    }
}
