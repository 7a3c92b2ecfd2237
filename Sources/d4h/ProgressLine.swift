import ArgumentParser
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Foundation
import PostgresNIO

/// The import's progress on standard error: rewritten in place (`\r`) on a terminal; elsewhere (a log, a pipe)
/// one line at the start, then at most one every few seconds, and one at the end.
final class ProgressLine: @unchecked Sendable {
    private let terminal: Bool
    private let lock = NSLock()
    private var lastShown: ContinuousClock.Instant?
    private var last: AppleHealthImport.Progress?
    private var lastLine = ""
    private var shownComplete = false
    static let interval: Duration = .seconds(3)

    init(terminal: Bool) { self.terminal = terminal }

    func show(_ progress: AppleHealthImport.Progress) {
        lock.lock()
        defer { lock.unlock() }
        last = progress
        let now = ContinuousClock.now
        let due = lastShown.map { now - $0 >= (terminal ? .milliseconds(200) : Self.interval) } ?? true
        // The moment the whole file is read is shown once; storing what waited for its sources follows at the
        // usual pace.
        let justComplete = progress.bytesRead == progress.bytesTotal && !shownComplete
        guard due || justComplete else { return }
        write(progress)
        lastShown = now
        if progress.bytesRead == progress.bytesTotal { shownComplete = true }
    }

    /// The last figures, if they were not shown; then a newline after a terminal's line.
    func end() {
        lock.lock()
        defer { lock.unlock() }
        if let last, Self.line(last) != lastLine { write(last) }
        if terminal, lastShown != nil { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    private func write(_ progress: AppleHealthImport.Progress) {
        let line = Self.line(progress)
        lastLine = line
        FileHandle.standardError.write(Data((terminal ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    static func line(_ p: AppleHealthImport.Progress) -> String {
        let percent = p.bytesTotal > 0 ? Double(p.bytesRead) * 100 / Double(p.bytesTotal) : 100
        return "Read \(megabytes(p.bytesRead)) of \(megabytes(p.bytesTotal)) (\(Int(percent.rounded(.down))) %), "
            + "\(p.recordsRead) records, \(p.stored) samples stored"
    }

    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1_000_000) }
}
