import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation

/// The seeding progress on standard error: redrawn in place on a terminal, a line every 10% otherwise (logs, CI).
final class ProgressBar: @unchecked Sendable {
    // Only the seeding task calls `show`, one call at a time; the lock makes that assumption unnecessary.
    private let lock = NSLock()
    private let isTerminal = isatty(2) == 1
    private var lastTenth = -1
    private var drawn = false

    func show(_ progress: SyntheticPopulation.Progress) {
        lock.withLock {
            let fraction = progress.total > 0 ? Double(progress.people) / Double(progress.total) : 1
            let filled = Int(fraction * 20)
            let line =
                "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 20 - filled) + "] "
                + "\(Int(fraction * 100))% \(progress.people)/\(progress.total) people  "
                + "\(Self.short(Double(progress.samples))) samples  \(Self.short(progress.samplesPerSecond)) samples/s"
            if isTerminal {
                // Trailing spaces wipe what a longer previous line left behind.
                printError("\r" + line + "   ", newline: false)
                drawn = true
            } else if Int(fraction * 10) > lastTenth {
                lastTenth = Int(fraction * 10)
                printError(line)
            }
        }
    }

    func finish() {
        lock.withLock { if drawn { printError("") } }
    }

    /// 812 → "812", 812_345 → "812k", 2_700_000 → "2.7M".
    static func short(_ value: Double) -> String {
        switch value {
        case ..<1_000: String(Int(value))
        case ..<1_000_000: "\(Int(value / 1_000))k"
        default: String(format: "%.1fM", value / 1_000_000)
        }
    }
}
