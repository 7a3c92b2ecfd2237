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

extension ChildProcess {
    /// A program left running for the length of a test (a server it talks to), its output going to a file
    /// (a pipe nobody reads would fill and stall it). `stop()` ends it; used within one test's task.
    struct Running {
        let process: Process
        let output: URL

        /// What the program printed so far.
        var printed: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

        /// SIGTERM, then SIGKILL if it is still there after five seconds; waits without blocking a thread.
        func stop() async {
            guard process.isRunning else { return }
            process.terminate()
            let deadline = ContinuousClock.now + .seconds(5)
            while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Starts `executable` with `arguments`; stdout and stderr together into `output`.
    static func start(_ executable: URL, _ arguments: [String], output: URL) throws -> Running {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        try handle.close()
        return Running(process: process, output: output)
    }
}
