/// The bounds on every wait the server's database work can get into (issue 14): how many connections the
/// pool opens, how long a request waits for one, and how long PostgreSQL lets one statement run, wait for a
/// lock, or sit idle inside a transaction. Each bound, when hit, is a 503 with `Retry-After` for the caller
/// and a rollback for the database, never a hang.
package struct DatabaseLimits: Sendable, Equatable {
    /// `DATABASE_POOL_SIZE`: connections the pool may open. The cluster's `max_connections` must cover
    /// every instance's pool plus the watchdog's probe connection.
    package var poolSize = 20
    /// `DATABASE_POOL_TIMEOUT`: how long a request waits for a free connection.
    package var leaseTimeout: Duration = .seconds(5)
    /// `DATABASE_STATEMENT_TIMEOUT`: the longest a statement of the request path may run. Work whose
    /// statements grow with the data (group evaluations, erasure, audit verification) gets
    /// `LongStatements.bound` for its own transaction.
    package var statementTimeout: Duration? = .seconds(30)
    /// `DATABASE_LOCK_TIMEOUT`: the longest a statement waits for a row, table or advisory lock.
    package var lockTimeout: Duration? = .seconds(5)
    /// PostgreSQL ends a session left idle inside a transaction for this long (rolling it back), so a
    /// stuck instance cannot hold locks that another needs. Also set on the application's role by
    /// `scripts/pg-cluster.sh`, which covers sessions this server did not open.
    package var idleInTransactionTimeout: Duration? = .seconds(60)
    /// How long a graceful stop of the pool waits for the leases in flight (and those asked for meanwhile)
    /// to end before closing its connections (`DatabasePool.run`).
    package var drainBound: Duration = .seconds(10)

    package init() {}

    /// One-off commands (`migrate`, `seed`, `import`, benchmarks): no statement or lock bound, since they
    /// run alone and their statements are as long as the data.
    package static let unbounded: DatabaseLimits = {
        var limits = DatabaseLimits()
        limits.statementTimeout = nil
        limits.lockTimeout = nil
        limits.leaseTimeout = .seconds(600)
        limits.idleInTransactionTimeout = nil
        return limits
    }()

    /// The session settings each pooled connection starts with (PostgreSQL's own names, in milliseconds;
    /// a missing bound is 0, PostgreSQL's "no limit").
    var startupParameters: [(String, String)] {
        [("statement_timeout", statementTimeout), ("lock_timeout", lockTimeout), ("idle_in_transaction_session_timeout", idleInTransactionTimeout)]
            .map { name, bound in (name, String(bound.map(Self.milliseconds) ?? 0)) }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
