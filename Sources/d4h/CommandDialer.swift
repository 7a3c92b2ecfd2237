import ArgumentParser
import AutomatedSOS
import BrokerDomain
import BrokerServer
import CommandLineSupport
import Foundation

/// Runs `/bin/sh -c "<command> \"$@\""` with the alert's rule, type, value and time as arguments.
struct CommandDialer: SOSDialer {
    struct Failed: Error, CustomStringConvertible {
        var status: Int32
        var description: String { "the dial command exited with status \(status)" }
    }

    var command: String

    func dial(for alert: SOSAlert) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command + " \"$@\"", "d4h-sos", alert.rule, alert.type.rawValue, String(alert.value), SOSTrace.format(alert.at)]
        // Standard output carries only the JSON lines.
        process.standardOutput = FileHandle.standardError
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        guard status == 0 else { throw Failed(status: status) }
    }
}
