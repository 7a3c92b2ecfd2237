import PostgresNIO
import PostgresStatements

/// Reads the facts error mapping needs out of PostgresNIO's errors, looking through transaction wrappers.
package enum PostgresErrors {
    /// The violated unique constraint's name, when `error` is SQLSTATE 23505.
    static func uniqueViolation(in error: any Error) -> String? {
        guard let psql = psqlError(in: error), psql.serverInfo?[.sqlState] == "23505" else { return nil }
        return psql.serverInfo?[.constraintName] ?? ""
    }

    /// The database could not be reached or dropped the connection (as opposed to rejecting a statement):
    /// the request can be retried once it is back.
    package static func isConnectionFailure(_ error: any Error) -> Bool {
        // A statement the connection's close left unanswered (`StrandedStatements`).
        if unwrapTransaction(error) is DatabaseConnectionLost { return true }
        if let psql = psqlError(in: error) {
            if let state = psql.serverInfo?[.sqlState] {
                // 08: connection exception; 57P01–57P03: the server is shutting down, crashed or starting.
                return state.hasPrefix("08") || state.hasPrefix("57P")
            }
            return [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed]
                .contains(psql.code)
        }
        // The pool's own errors (its circuit breaker tripped, the lease was cancelled) live in a module
        // PostgresNIO does not export.
        return String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError")
    }

    /// The pool itself was shut down (the server is stopping): PostgresNIO's closed client, or its connection
    /// pool's shutdown. It does not come back, so nothing waiting on it should try again.
    package static func isPoolShutDown(_ error: any Error) -> Bool {
        if psqlError(in: error)?.code == .poolClosed { return true }
        // The pool's own error type lives in a module PostgresNIO does not export (see `isConnectionFailure`).
        return String(reflecting: unwrapTransaction(error)).contains("poolShutdown")
    }

    /// The server refused a write because it is (now) a standby or read-only (25006): the pool's host was
    /// demoted in a failover, and the watchdog is moving the pool to the new primary. Retry shortly.
    package static func isReadOnlyServer(_ error: any Error) -> Bool {
        psqlError(in: error)?.serverInfo?[.sqlState] == "25006"
    }

    /// A bound of the server's was hit (issue 14): no pooled connection or evaluation slot in time, or
    /// PostgreSQL ended a statement that waited too long for a lock (55P03), ran too long (57014, also
    /// what a cancelled statement reports) or sat idle in a transaction (25P03), or a transaction it chose to
    /// end in a deadlock or conflict (40P01, 40001). Nothing was written: the
    /// request can be sent again.
    package static func isOverload(_ error: any Error) -> Bool {
        switch unwrapTransaction(error) {
        case is DatabaseBusy, is EvaluationsBusy: return true
        default: break
        }
        guard let state = psqlError(in: error)?.serverInfo?[.sqlState] else { return false }
        // 40P01 and 40001: PostgreSQL ended the transaction to break a deadlock or a serialization (or, on a
        // standby, a recovery) conflict; it was rolled back whole.
        return ["55P03", "57014", "25P03", "40P01", "40001"].contains(state)
    }

    /// The upload's single statement could not finish alone and undid itself (`upload_needs_transaction`,
    /// migration 0042): store it again in a transaction.
    static func uploadNeedsTransaction(_ error: any Error) -> Bool {
        psqlError(in: error)?.serverInfo?[.sqlState] == "D4H01"
    }

    package static func psqlError(in error: any Error) -> PSQLError? {
        if let psql = error as? PSQLError { return psql }
        if let transaction = error as? PostgresTransactionError {
            if let closureError = transaction.closureError { return psqlError(in: closureError) }
            if let begin = transaction.beginError { return psqlError(in: begin) }
            if let commit = transaction.commitError { return psqlError(in: commit) }
        }
        return nil
    }

    /// The error a closure inside `withTransaction` threw, so domain errors keep their identity.
    package static func unwrapTransaction(_ error: any Error) -> any Error {
        if let transaction = error as? PostgresTransactionError, let closureError = transaction.closureError {
            return closureError
        }
        return error
    }
}
