import ArgumentParser
import Foundation
import Logging
import PostgresNIO

/// Runs `command` as the root command. Database errors hide their detail from `description` (it may hold
/// data); an operator at a terminal needs it.
package func runAsRoot<Root: ParsableCommand>(_ command: Root.Type) async {
    do {
        var parsed = try Root.parseAsRoot()
        if var asyncCommand = parsed as? any AsyncParsableCommand {
            try await asyncCommand.run()
        } else {
            try parsed.run()
        }
    } catch let error as PSQLError {
        fail("database error: \(error.serverInfo?[.message] ?? String(reflecting: error.code))")
    } catch {
        Root.exit(withError: error)
    }
}

/// `--database-url`, falling back to `DATABASE_URL`.
package struct DatabaseOptions: ParsableArguments {
    package init() {}

    @Option(help: "postgres://user:password@host:port/database (default: $DATABASE_URL)")
    package var databaseURL: String?

    package func resolved() throws -> String {
        if let databaseURL { return databaseURL }
        if let fromEnvironment = ProcessInfo.processInfo.environment["DATABASE_URL"] { return fromEnvironment }
        throw ValidationError("set DATABASE_URL or pass --database-url")
    }
}

package func makeLogger(level: Logger.Level = .info) -> Logger {
    var logger = Logger(label: "d4h")
    logger.logLevel = level
    return logger
}

/// Prints a refusal to standard error and exits non-zero.
package func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("d4h: \(message)\n".utf8))
    exit(1)
}
