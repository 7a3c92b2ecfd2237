import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The server's resident set size from /proc (Linux), sampled over the run.
final class ResidentMemorySampler: Sendable {
    let pid: Int32
    private let samples = Mutex<[Int]>([])

    init(pid: Int32) { self.pid = pid }

    /// KiB, or nil when not sampling or the process is gone.
    func sample() -> Int? {
        guard pid > 0, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        samples.withLock { $0.append(kib) }
        return kib
    }

    func series() -> [Int] { samples.withLock { $0 } }

    func sampleEvery(_ interval: Duration, until deadline: ContinuousClock.Instant) async {
        while ContinuousClock.now + interval <= deadline {
            try? await Task.sleep(for: interval)
            _ = sample()
        }
    }
}
