import Foundation

/// Runs a program to completion without blocking a Swift concurrency thread. (`waitUntilExit` blocks one,
/// and Foundation delivers the exit on Dispatch's default-priority threads, which are the same threads:
/// two tests waiting at once on a 2-core machine deadlocked the whole test run.)
enum ChildProcess {
    struct Run {
        var status: Int32
        var output: String
    }

    /// `executable` with `arguments`; stdout and stderr together. Gives up after `timeout`.
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, timeout: Duration = .seconds(60)
    ) async throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                throw TestSetupError("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Run(status: process.terminationStatus, output: text)
    }
}
