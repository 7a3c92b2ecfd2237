import Foundation

/// The `d4h` executable, run as an operator would run it (the command-line tests, the audit verifier, the
/// importer, AutomatedSOS's replay).
enum D4HCommand {
    /// `.build/<config>/d4h`, beside the test bundle SwiftPM built.
    static var executable: URL {
        get throws {
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            while directory.path != "/" {
                let candidate = directory.appendingPathComponent("d4h")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory.deleteLastPathComponent()
            }
            throw TestSetupError("d4h is not built next to the tests: run `swift build` (make test does) first")
        }
    }

    /// Runs d4h with `arguments` and `environment`, giving up after 60 s.
    static func run(_ arguments: [String], environment: [String: String]) async throws -> ChildProcess.Run {
        try await ChildProcess.run(
            try executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }
}
