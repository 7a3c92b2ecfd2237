import Logging
import PostgresNIO
import PostgresStatements

/// PostgresNIO's `query`, shadowed in this module (its own declarations shadow those of the modules it
/// imports), so that every statement of every store goes through `StrandedStatements` and none waits for
/// ever on a connection that closed under it; `StrandedStatementsTests` checks that the shadowing holds (a
/// store's statement on a closed connection fails at once). Disfavoured, so that the tests, which see both
/// through `@testable import`, pick PostgresNIO's for their own connections instead of finding the call
/// ambiguous; inside this module PostgresNIO's is shadowed and the attribute changes nothing.
///
/// And a transaction whose BEGIN, COMMIT and ROLLBACK go through it too. PostgresNIO's `withTransaction` sends
/// them through its own `query`, and a method of the same signature here did not shadow it (the compiler
/// still chose PostgresNIO's, and its ROLLBACK stranded), so this one has a name of its own; every transaction
/// of this module is `DatabasePool.withTransaction`, which calls it.
extension PostgresConnection {
    @_disfavoredOverload
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws -> PostgresRowSequence {
        try await unstrandedQuery(query, logger: logger, file: file, line: line)
    }

    /// BEGIN, the body, then COMMIT, or ROLLBACK when the body throws, each sent through `query` above:
    /// PostgresNIO's own sends them through its stranding `query`, and its ROLLBACK follows every statement
    /// that failed because the connection was lost. Throws the body's error (or BEGIN's or COMMIT's) itself,
    /// not wrapped in PostgresNIO's `PostgresTransactionError` (which `PostgresErrors` still looks through); a
    /// connection whose ROLLBACK failed is closed rather than given back to the pool in a failed transaction.
    func withUnstrandedTransaction<Result>(
        logger: Logger, file: String = #fileID, line: Int = #line, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await query("BEGIN;", logger: logger, file: file, line: line)
        let value: Result
        do {
            value = try await body(self)
        } catch {
            do { try await query("ROLLBACK;", logger: logger, file: file, line: line) } catch {
                // A session left in a failed transaction must not go back to the pool.
                if !isClosed { try? await close() }
            }
            throw error
        }
        try await query("COMMIT;", logger: logger, file: file, line: line)
        return value
    }
}
