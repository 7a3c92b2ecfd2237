import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// PostgresNIO (1.33) strands a statement sent on a connection whose channel has already closed: it writes
/// the statement to the channel with no promise, a closed channel's pipeline drops the write, and the
/// statement's own promise is never completed. Its caller waits for ever, cancellation or not, and with it
/// a request, a background loop, or the server's shutdown, which waits for both.
///
/// A failover or an ended session (`pg_terminate_backend`) closes connections in the middle of leases, so
/// this is not rare: the ROLLBACK that PostgresNIO's `withTransaction` sends after a statement that failed
/// because its session ended hung whenever the close came first, and so did the next statement of a lease
/// whose connection closed between two statements. CI's full run once stopped for good this way (a failover
/// test's server never stopped).
///
/// So BrokerDomain's statements go through the methods below: its own `query` shadows PostgresNIO's of the
/// same signature (a module's own declarations shadow those of the modules it imports), its prepared
/// statements and its transactions (`withUnstrandedTransaction`) call them too
/// (`PostgresConnection+Unstranded.swift`). Each refuses at once on a connection already closed, and a
/// statement still unanswered `grace` after its connection closed fails with `DatabaseConnectionLost` (a
/// connection failure: 503 with `Retry-After`), while the stranded PostgresNIO call is abandoned. The grace
/// lets PostgresNIO deliver its own outcome for statements it did receive: a COMMIT answered just before
/// the close is reported as committed, not as lost.
public enum StrandedStatements {
    /// How long a statement may stay unanswered after its connection closed.
    public static let grace: TimeAmount = .seconds(1)

    /// The unanswered statements of each open connection, failed when it closes.
    private static let pending = Mutex<[ObjectIdentifier: [Int: @Sendable () -> Void]]>([:])
    private static let nextID = Atomic<Int>(0)

    /// How many of `connection`'s statements are waiting for an answer (for tests: none once each returned).
    public static func pendingCount(of connection: PostgresConnection) -> Int {
        pending.withLock { $0[ObjectIdentifier(connection)]?.count ?? 0 }
    }

    /// Runs `statement`, a PostgresNIO call on `connection`, in a task of its own, and returns its outcome, or
    /// throws `DatabaseConnectionLost` if `connection` is closed before it starts or closes and `statement` has
    /// not answered `grace` later.
    public static func run<T: Sendable>(on connection: PostgresConnection, _ statement: @escaping @Sendable () async throws -> T) async throws -> T {
        if connection.isClosed { throw DatabaseConnectionLost() }
        let first = FirstOutcome<T>()
        let key = ObjectIdentifier(connection)
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let lose: @Sendable () -> Void = {
            connection.eventLoop.scheduleTask(in: grace) { first.resume(with: .failure(DatabaseConnectionLost())) }
        }
        let work = Mutex<Task<Void, Never>?>(nil)
        defer { _ = pending.withLock { $0[key]?.removeValue(forKey: id) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                first.install(continuation)
                let watchClose = pending.withLock { pending -> Bool in
                    let isFirst = pending[key] == nil
                    pending[key, default: [:]][id] = lose
                    return isFirst
                }
                // One watcher per connection (not one callback per statement, which would pile up on a long-lived
                // connection's close future). It is still alive here, so its identifier is not yet reused.
                if watchClose {
                    connection.closeFuture.whenComplete { _ in
                        for lose in pending.withLock({ $0.removeValue(forKey: key) })?.values ?? [:].values { lose() }
                    }
                }
                // Closed between the check above and the registration: the watcher may have run already.
                if connection.isClosed { lose() }
                // Started once the outcome has somewhere to go (`FirstOutcome` would also keep an early one).
                let task = Task {
                    do { first.resume(with: .success(try await statement())) } catch { first.resume(with: .failure(error)) }
                }
                work.withLock { $0 = task }
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            work.withLock { $0?.cancel() }
        }
    }
}

/// The connection closed under a statement, which then never answered (`StrandedStatements`).
public struct DatabaseConnectionLost: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "the database connection closed before the statement was answered" }
}

extension PostgresConnection {
    /// PostgresNIO's `query`, never stranded on a closed connection.
    public func unstrandedQuery(_ query: PostgresQuery, logger: Logger, file: String, line: Int) async throws -> PostgresRowSequence {
        try await StrandedStatements.run(on: self) { [self] in try await self.query(query, logger: logger, file: file, line: line) }
    }

    /// PostgresNIO's `copyFrom` (text format), never stranded on a closed connection: it writes its COPY with no
    /// promise as `query` does, and waited for ever on a connection that had closed.
    public func unstrandedCopyFrom(
        table: String, columns: [String], logger: Logger, file: String, line: Int,
        writeData: @escaping @Sendable (PostgresCopyFromWriter) async throws -> Void
    ) async throws {
        try await StrandedStatements.run(on: self) { [self] in
            try await self.copyFrom(table: table, columns: columns, logger: logger, file: file, line: line) { try await writeData($0) }
        }
    }

    /// The rows of PostgresNIO's `execute` of a prepared statement, read in full, never stranded on a closed
    /// connection.
    public func unstrandedRows<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        try await StrandedStatements.run(on: self) { [self] in
            var rows: [Statement.Row] = []
            for try await row in try await self.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }
}
