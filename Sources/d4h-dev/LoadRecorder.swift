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

/// Latencies and errors per endpoint, shared by every client.
final class LoadRecorder: Sendable {
    private struct Endpoint {
        var milliseconds: [Double] = []
        var errors = 0
    }

    private struct State {
        var endpoints: [String: Endpoint] = [:]
        var errorExamples: [String] = []
    }

    private let state = Mutex(State())

    func call(_ endpoint: String, _ work: () async throws -> Void) async {
        let start = ContinuousClock.now
        var failure: (any Error)?
        do { try await work() } catch { failure = error }
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        state.withLock { state in
            state.endpoints[endpoint, default: Endpoint()].milliseconds.append(milliseconds)
            if let failure {
                state.endpoints[endpoint, default: Endpoint()].errors += 1
                if state.errorExamples.count < 10 { state.errorExamples.append("\(endpoint): \(failure)") }
            }
        }
    }

    func errorExamples() -> [String] { state.withLock { $0.errorExamples } }

    struct Report {
        var lines: [String]
        var requests: Int
        var errors: Int
    }

    func report(seconds: Double) -> Report {
        state.withLock { state in
            var lines: [String] = []
            var requests = 0
            var errors = 0
            for (name, endpoint) in state.endpoints.sorted(by: { $0.key < $1.key }) {
                let sorted = endpoint.milliseconds.sorted()
                func percentile(_ fraction: Double) -> String { String(format: "%.1f", d4h_dev.percentile(sorted, fraction)) }
                requests += sorted.count
                errors += endpoint.errors
                lines.append(
                    "| \(name) | \(sorted.count) | \(String(format: "%.1f", Double(sorted.count) / seconds)) | \(percentile(0.5)) | \(percentile(0.99)) | \(String(format: "%.1f", sorted.last ?? 0)) | \(endpoint.errors) |"
                )
            }
            lines.append("| **all** | \(requests) | \(String(format: "%.1f", Double(requests) / seconds)) | | | | \(errors) |")
            return Report(lines: lines, requests: requests, errors: errors)
        }
    }
}
