import Logging
import PostgresNIO
import PostgresStatements
import Testing

@testable import BrokerDomain

/// PostgresNIO 1.33 strands a statement sent on a connection that has closed: its caller waits for ever.
/// CI's full run stopped that way (a failover test's server never stopped: a background loop's ROLLBACK
/// after its session was ended, and a request's next statement, never answered). These end their own
/// session, as a failover or `pg_terminate_backend` does, and check that what follows fails at once as a
/// connection failure (a 503 with `Retry-After` at the API). Each is bounded by `abandoning(after:)`, so
/// the stranding they look for fails the test instead of hanging the run.
@Suite("A statement on a connection that closed under it fails at once, never waits for ever")
struct StrandedStatementsTests {
    static let logger = Logger(label: "test")
    static let bound = 20.0

    /// What is left of a lease after the statement that ended its own session.
    enum Outcome: Sendable, Equatable {
        case connectionFailure
        case otherError(String)
        case answered

        static func of(_ work: () async throws -> Void) async -> Outcome {
            do {
                try await work()
                return .answered
            } catch {
                return PostgresErrors.isConnectionFailure(error) ? .connectionFailure : .otherError("\(error)")
            }
        }
    }

    /// What `statement` comes to on a pooled connection whose session has ended and whose channel has closed.
    static func onClosedConnection(_ statement: @escaping @Sendable (PostgresConnection) async throws -> Void) async throws -> Outcome {
        try await TestDatabase.withMigratedDatabase { url in
            try await Self.withPool(url) { pool in
                try await pool.withConnection { connection in
                    _ = try? await Self.endOwnSession(connection)
                    try await Self.waitUntilClosed(connection)
                    return await Outcome.of { try await statement(connection) }
                }
            }
        }
    }

    @Test("a store's statement after its connection closed (through the module's shadowing query) fails as a connection failure")
    func statementAfterClose() async throws {
        // `HostState.read` is a BrokerDomain statement, so it calls that module's `query`.
        let outcome = try await Self.onClosedConnection { _ = try await HostState.read(from: $0, logger: Self.logger) }
        #expect(outcome == .connectionFailure)
    }

    @Test("a transaction whose statement ends its session rolls back without waiting for ever, as a connection failure")
    func transactionOnAClosingConnection() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let outcome = try await Self.withPool(url) { pool in
                await Outcome.of {
                    try await pool.withTransaction(logger: Self.logger) { connection in
                        do {
                            _ = try await Self.endOwnSession(connection)
                        } catch {
                            // The ROLLBACK then goes to a connection certainly closed, as it does when the close
                            // wins the race with it.
                            try await Self.waitUntilClosed(connection)
                            throw error
                        }
                    }
                }
            }
            #expect(outcome == .connectionFailure)
        }
    }

    @Test("a prepared statement on a closed connection fails at once as a connection failure")
    func preparedAfterClose() async throws {
        let outcome = try await Self.onClosedConnection { _ = try await $0.preparedRows(One(), logger: Self.logger) }
        #expect(outcome == .connectionFailure)
    }

    @Test("a COPY on a closed connection (the stores' staging) fails at once as a connection failure")
    func copyAfterClose() async throws {
        // PostgresNIO's `copyFrom` writes its COPY with no promise, as its `query` does, and waited for ever.
        let outcome = try await Self.onClosedConnection { connection in
            try await connection.copyLines([1, 2, 3], into: "staged", columns: ["n"], logger: Self.logger) { n, buffer in
                buffer.writeString("\(n)\n")
            }
        }
        #expect(outcome == .connectionFailure)
    }

    @Test("no statement stays pending once answered: 200 statements on one connection leave none")
    func noPileUp() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            try await Self.withPool(url) { pool in
                try await pool.withConnection { connection in
                    for _ in 0..<200 { _ = try await connection.query("SELECT 1", logger: Self.logger).collect() }
                    #expect(StrandedStatements.pendingCount(of: connection) == 0)
                }
            }
        }
    }

    struct One: PostgresPreparedStatement {
        static let sql = "SELECT 1"
        typealias Row = Int
        func makeBindings() -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    /// Runs `body` with a running pool of one connection on `url`, failing (not hanging) past `bound`.
    static func withPool<T: Sendable>(_ url: DatabaseURL, _ body: @escaping @Sendable (DatabasePool) async throws -> T) async throws -> T {
        var limits = DatabaseLimits()
        limits.poolSize = 1
        let pool = DatabasePool(url: url, host: url.hosts[0], limits: limits, logger: logger)
        let running = Task { await pool.run() }
        defer { running.cancel() }
        do {
            return try await abandoning(after: bound) { try await body(pool) }
        } catch is TimedOut {
            Issue.record("the statement waited \(bound) s: stranded on its closed connection")
            throw TimedOut()
        }
    }

    /// Ends the session of `connection` by its own statement. Through the guard: PostgresNIO's own `query` can
    /// itself be left unanswered when the server ends the session under it.
    static func endOwnSession(_ connection: PostgresConnection) async throws -> [PostgresRow] {
        try await connection.unstrandedQuery("SELECT pg_terminate_backend(pg_backend_pid())", logger: logger, file: #fileID, line: #line).collect()
    }

    static func waitUntilClosed(_ connection: PostgresConnection) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !connection.isClosed, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(connection.isClosed)
    }
}
