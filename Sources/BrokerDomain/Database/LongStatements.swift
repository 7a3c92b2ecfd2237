import Logging
import PostgresNIO

/// Work whose statements grow with the data (a group evaluation over a large population, the erasure of an
/// account with years of samples, the verification of the whole audit log) gets a longer statement bound
/// than the request path's `DATABASE_STATEMENT_TIMEOUT`, for its own transaction only. It is still bounded:
/// such work runs in few places at once (evaluation slots, one erasure per account), never in a burst.
enum LongStatements {
    static let bound = "10min"

    /// Only inside a transaction (`SET LOCAL` ends with it).
    static func allow(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SET LOCAL statement_timeout = '\(unescaped: bound)'", logger: logger)
    }
}
