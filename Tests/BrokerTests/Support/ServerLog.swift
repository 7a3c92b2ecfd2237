import Logging
import Synchronization
import Testing

/// What a test server logged at `warning` or above, read when its test ends: a line at `error` level, or a
/// `warning` the test did not list as expected, fails the test with the line in the message.
///
/// Item 1 of issue 27 (sample partition maintenance failing at every start) was logged by every test
/// server for months and nothing read it; this makes that class of bug fail the day it is introduced.
final class ServerLog: Sendable {
    struct Line: Sendable, CustomStringConvertible {
        var level: Logger.Level
        var label: String
        var message: String
        var metadata: String

        var description: String { "[\(level)] \(label): \(message)" + (metadata.isEmpty ? "" : " \(metadata)") }
    }

    private let lines = Mutex<[Line]>([])

    /// What a server without an audit signing key warns at start (the tests' servers, unless they set one).
    static let noAuditCheckpoints = ExpectedLog.warning("audit checkpoints are off")

    /// What a server without a consent signing key warns at start (the tests' servers have one unless a test unsets it).
    static let noConsentReceipts = ExpectedLog.warning("consent receipts are off")

    /// What the background work says at each pass on a database that was never migrated (no tables).
    static let unmigratedDatabase: [ExpectedLog] = [.warning("does not exist"), .error("does not exist")]

    /// A logger whose lines at `level` and above are kept here (and nowhere else: a passing test prints nothing).
    func logger(label: String = "data4help", level: Logger.Level) -> Logger {
        var logger = Logger(label: label) { label in Handler(label: label, log: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: Line) { lines.withLock { $0.append(line) } }

    /// The kept lines that no expectation covers.
    func unexpected(allowing expected: [ExpectedLog]) -> [Line] {
        lines.withLock { $0 }.filter { line in
            !expected.contains { $0.covers(line) }
        }
    }

    /// Records a test issue naming every unexpected line (at most the first 20).
    func check(allowing expected: [ExpectedLog], sourceLocation: SourceLocation = #_sourceLocation) {
        let unexpected = unexpected(allowing: expected)
        guard !unexpected.isEmpty else { return }
        let shown = unexpected.prefix(20).map { "  \($0)" }.joined(separator: "\n")
        let more = unexpected.count > 20 ? "\n  … and \(unexpected.count - 20) more" : ""
        Issue.record(
            "the test server logged \(unexpected.count) line(s) at warning or above that the test did not expect:\n\(shown)\(more)",
            sourceLocation: sourceLocation)
    }

    private struct Handler: LogHandler {
        let label: String
        let log: ServerLog
        var logLevel: Logger.Level = .warning
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(
            level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
            function: String, line: UInt
        ) {
            // Lower levels are the server's business: only what an operator would be alerted by is read.
            guard level >= .warning else { return }
            let merged = metadata.merging(explicit ?? [:]) { $1 }
            let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            log.append(Line(level: level, label: label, message: message.description, metadata: rendered))
        }
    }
}

/// A log line that a test provokes on purpose (a database it stops, a hostile input the server warns
/// about): its level and a fragment of its message. It may appear any number of times, or not at all.
struct ExpectedLog: Sendable, CustomStringConvertible {
    var level: Logger.Level
    var fragment: String

    static func warning(_ fragment: String) -> ExpectedLog { ExpectedLog(level: .warning, fragment: fragment) }
    static func error(_ fragment: String) -> ExpectedLog { ExpectedLog(level: .error, fragment: fragment) }

    func covers(_ line: ServerLog.Line) -> Bool {
        line.level == level && (line.message.contains(fragment) || line.metadata.contains(fragment))
    }

    var description: String { "[\(level)] …\(fragment)…" }
}
