import PostgresNIO

/// Reads the facts error mapping needs out of PostgresNIO's errors, looking through transaction wrappers.
enum PostgresErrors {
    /// The violated unique constraint's name, when `error` is SQLSTATE 23505.
    static func uniqueViolation(in error: any Error) -> String? {
        guard let psql = psqlError(in: error), psql.serverInfo?[.sqlState] == "23505" else { return nil }
        return psql.serverInfo?[.constraintName] ?? ""
    }

    /// The database could not be reached or dropped the connection (as opposed to rejecting a statement):
    /// the request can be retried once it is back.
    static func isConnectionFailure(_ error: any Error) -> Bool {
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

    static func psqlError(in error: any Error) -> PSQLError? {
        if let psql = error as? PSQLError { return psql }
        if let transaction = error as? PostgresTransactionError {
            if let closureError = transaction.closureError { return psqlError(in: closureError) }
            if let begin = transaction.beginError { return psqlError(in: begin) }
            if let commit = transaction.commitError { return psqlError(in: commit) }
        }
        return nil
    }

    /// The error a closure inside `withTransaction` threw, so domain errors keep their identity.
    static func unwrapTransaction(_ error: any Error) -> any Error {
        if let transaction = error as? PostgresTransactionError, let closureError = transaction.closureError {
            return closureError
        }
        return error
    }
}
