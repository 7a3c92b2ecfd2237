import Foundation
import Logging
import PostgresNIO

/// The SQL of the rate limits (`RateLimiter`): one row per account and operation in `rate_limit_buckets`.
///
/// A bucket of `capacity` tokens that refills one token every `interval` is kept in the equivalent GCRA form
/// (the generic cell rate algorithm): one instant, `full_at`, when the bucket is (or will again be) full. A
/// request at `now` is admitted while `full_at` is at most (capacity − 1) intervals ahead of `now` (the
/// bucket's slack beyond the token the request takes), and moves `full_at` to `greatest(full_at, now) +
/// interval`. A missing row is a full bucket. Times are whole microseconds (`timestamptz`'s resolution); the
/// interval is rounded up to one (`RateLimit.intervalMicroseconds`), so a period never admits more than the
/// capacity, and the wait a refusal reports is exactly when the next request is admitted.
///
/// `at` is the instant to charge at, or nil for the database's `now()`: see `RateLimits.clock`.
enum RateLimitStore {
    /// Charges one request to the bucket of (`account`, `operation`): nil when admitted, otherwise the wait
    /// until a token is there, in microseconds (at least 1). One statement, taking the row's lock, so that
    /// concurrent charges of one bucket (from any instance) queue on it and each sees the one before; a
    /// refused charge updates nothing (the `WHERE` of `DO UPDATE`). Only a refusal reads the row again, for
    /// its wait.
    static func charge(
        account: UUID, operation: RateLimitedOperation, limit: RateLimit, at instant: Date?, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Int64? {
        let micros = microseconds(instant)
        let interval = limit.intervalMicroseconds
        let slack = interval * Int64(limit.capacity - 1)
        let admitted = try await connection.query(
            """
            WITH clock AS (SELECT coalesce(timestamptz 'epoch' + interval '1 microsecond' * \(micros), now()) AS now)
            INSERT INTO rate_limit_buckets AS bucket (account_id, operation, full_at)
            SELECT \(account), \(operation.rawValue), clock.now + interval '1 microsecond' * \(interval) FROM clock
            ON CONFLICT (account_id, operation) DO UPDATE
                SET full_at = greatest(bucket.full_at, (SELECT now FROM clock)) + interval '1 microsecond' * \(interval)
                WHERE bucket.full_at <= (SELECT now FROM clock) + interval '1 microsecond' * \(slack)
            RETURNING 1
            """, logger: logger
        ).collect()
        guard admitted.isEmpty else { return nil }
        // Refused: the row is there and more than the slack ahead. Read on the same clock; by now another
        // charge may have moved it, or (on the database's clock) time may have passed, so at least 1 µs.
        let rows = try await connection.query(
            """
            WITH clock AS (SELECT coalesce(timestamptz 'epoch' + interval '1 microsecond' * \(micros), now()) AS now)
            SELECT (extract(epoch FROM full_at - clock.now) * 1000000)::int8 - \(slack)
            FROM rate_limit_buckets, clock WHERE account_id = \(account) AND operation = \(operation.rawValue)
            """, logger: logger
        ).collect()
        return max(1, try rows.first?.decode(Int64.self) ?? 1)
    }

    /// Deletes at most `limit` full buckets (those whose `full_at` is not after `at`, or the database's
    /// `now()`): a full bucket and no row answer the next charge the same. Returns how many.
    static func deleteFull(at instant: Date?, limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let micros = microseconds(instant)
        let rows = try await connection.query(
            """
            WITH clock AS (SELECT coalesce(timestamptz 'epoch' + interval '1 microsecond' * \(micros), now()) AS now),
            gone AS (
                DELETE FROM rate_limit_buckets
                WHERE ctid = ANY (ARRAY(
                        SELECT ctid FROM rate_limit_buckets WHERE full_at <= (SELECT now FROM clock) LIMIT \(limit)))
                    -- Again on the row as it is when deleted: one charged meanwhile is no longer full.
                    AND full_at <= (SELECT now FROM clock)
                RETURNING 1)
            SELECT count(*)::int8 FROM gone
            """, logger: logger
        ).collect()
        return Int(try rows.first?.decode(Int64.self) ?? 0)
    }

    /// `instant` in whole microseconds since 1970, rounded to the nearest: bound as a number rather than as a
    /// `Date`, whose encoding truncates its `Double` (a test's instant one interval on could land a
    /// microsecond short).
    private static func microseconds(_ instant: Date?) -> Int64? {
        instant.map { Int64(($0.timeIntervalSince1970 * 1_000_000).rounded()) }
    }
}
