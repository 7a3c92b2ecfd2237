import Foundation
import Logging
import PostgresNIO

/// The SQL of the login throttle (`LoginThrottle`): one row per bucket in `login_throttle`.
enum LoginThrottleStore {
    /// Forgets the account bucket's failures and gives the address bucket its attempt back, lifting the
    /// address's block if that attempt was the one that set it.
    static func forgive(
        accountBucket: String, addressBucket: String, addressFreeFailures: Int, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            WITH forgiven AS (DELETE FROM login_throttle WHERE bucket = \(accountBucket))
            UPDATE login_throttle SET
                failures = greatest(failures - 1, 0),
                blocked_until = CASE WHEN failures - 1 < \(addressFreeFailures) THEN '-infinity' ELSE blocked_until END
            WHERE bucket = \(addressBucket)
            """, logger: logger)
    }

    /// Deletes the buckets quiet (no window, no block) for `seconds`; returns how many.
    static func forgetBuckets(quietFor seconds: Int, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            """
            WITH gone AS (
                DELETE FROM login_throttle
                WHERE greatest(window_started_at, blocked_until) < now() - make_interval(secs => \(seconds))
                RETURNING 1)
            SELECT count(*)::int8 FROM gone
            """, logger: logger)
        return Int(try await rows.collect().first?.decode(Int64.self) ?? 0)
    }

    /// Counts one failure in `bucket` and returns nil, or returns the seconds until it may be tried again.
    /// The row lock that the upsert and the update take is held to the end of the transaction: a concurrent
    /// attempt waits, then sees this one's count.
    static func count(_ bucket: String, policy: LoginThrottle.Policy, on connection: PostgresConnection, logger: Logger) async throws -> Int? {
        try await connection.query(
            """
            INSERT INTO login_throttle (bucket, failures, window_started_at, blocked_until)
            VALUES (\(bucket), 0, now(), '-infinity') ON CONFLICT (bucket) DO NOTHING
            """, logger: logger)
        // The policy's numbers are whole numbers from the configuration, not input: written into the text.
        let window = "make_interval(secs => \(policy.windowSeconds))"
        let quiet = "(now() >= window_started_at + \(window) AND now() >= blocked_until + \(window))"
        let failures = "(CASE WHEN \(quiet) THEN 1 ELSE failures + 1 END)"
        let delay =
            "least(\(policy.maximumDelaySeconds)::float8, \(policy.firstDelaySeconds)::float8 * power(2, least(\(failures) - \(policy.freeFailures), 30)))"
        let counted = try await connection.query(
            """
            UPDATE login_throttle SET
                window_started_at = CASE WHEN \(unescaped: quiet) THEN now() ELSE window_started_at END,
                blocked_until = CASE WHEN \(unescaped: failures) >= \(unescaped: String(policy.freeFailures))
                                     THEN now() + make_interval(secs => \(unescaped: delay)) ELSE blocked_until END,
                failures = \(unescaped: failures)
            WHERE bucket = \(bucket) AND blocked_until <= now()
            RETURNING failures
            """, logger: logger)
        if try await counted.collect().first != nil { return nil }
        let rows = try await connection.query(
            "SELECT ceil(extract(epoch FROM blocked_until - now()))::int8 FROM login_throttle WHERE bucket = \(bucket)",
            logger: logger)
        let seconds = try await rows.collect().first?.decode(Int64.self) ?? 1
        return max(1, Int(seconds))
    }
}
