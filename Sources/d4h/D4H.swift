import ArgumentParser
import Broker
import Configuration
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// `d4h`: the one executable of Data4Help.
@main
struct D4H: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "d4h",
        abstract: "Data4Help: a broker for sharing personal health data.",
        subcommands: [Serve.self, Migrate.self, Seed.self, Auditors.self, Audit.self, Import.self, SOS.self, Privacy.self, Bench.self])

    /// Database errors hide their detail from `description` (it may hold data); an operator at a terminal needs it.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as PSQLError {
            fail("database error: \(error.serverInfo?[.message] ?? String(reflecting: error.code))")
        } catch {
            exit(withError: error)
        }
    }
}

/// `--database-url`, falling back to `DATABASE_URL`.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "postgres://user:password@host:port/database (default: $DATABASE_URL)")
    var databaseURL: String?

    func resolved() throws -> String {
        if let databaseURL { return databaseURL }
        if let fromEnvironment = ProcessInfo.processInfo.environment["DATABASE_URL"] { return fromEnvironment }
        throw ValidationError("set DATABASE_URL or pass --database-url")
    }
}

func makeLogger(level: Logger.Level = .info) -> Logger {
    var logger = Logger(label: "d4h")
    logger.logLevel = level
    return logger
}

/// Prints a refusal to standard error and exits non-zero.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("d4h: \(message)\n".utf8))
    exit(1)
}
