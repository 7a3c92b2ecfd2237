import Foundation

@testable import BrokerDomain

/// scripts/tcp-relay.py on a loopback port, relaying to a database host: a second "host" of the test
/// PostgreSQL for the failover tests. Killing it loses that host as a dead machine would: its connections
/// break and its port refuses new ones.
struct TCPRelay {
    let host: DatabaseHost
    let directory: URL
    let process: ChildProcess.Running

    /// Starts a relay to `target` and waits up to 30 s for it to listen.
    static func start(to target: DatabaseHost) async throws -> TCPRelay {
        let script = SMTPSink.repositoryRoot.appendingPathComponent("scripts/tcp-relay.py")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-tcp-relay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ready = directory.appendingPathComponent("port")
        let process = try ChildProcess.start(
            URL(fileURLWithPath: "/usr/bin/python3"), [script.path, "--to", "\(target.host):\(target.port)", "--ready-file", ready.path],
            output: directory.appendingPathComponent("output"))
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: ready, encoding: .utf8), let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return TCPRelay(host: DatabaseHost(host: "127.0.0.1", port: port), directory: directory, process: process)
            }
            guard process.process.isRunning else { throw TestSetupError("tcp-relay.py exited before it listened: \(process.printed)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        await process.stop()
        throw TestSetupError("tcp-relay.py did not listen within 30 s: \(process.printed)")
    }

    /// SIGKILL: the relay's connections and its port go at once.
    func kill() async {
        guard process.process.isRunning else { return }
        Foundation.kill(process.process.processIdentifier, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(5)
        while process.process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }

    func stop() async {
        await kill()
        try? FileManager.default.removeItem(at: directory)
    }
}
