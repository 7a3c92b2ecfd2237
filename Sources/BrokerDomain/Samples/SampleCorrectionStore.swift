import Foundation
import Logging
import PostgresNIO

/// The SQL of corrections: deleting a person's samples and bringing their rollups back in line, on the
/// caller's transaction.
enum SampleCorrectionStore {
    /// Deletes what `correction` names and recomputes the person's rollups of the local days it touched;
    /// returns how many samples were deleted.
    ///
    /// Takes the person's arrival row lock first, as every upload (`SampleStore.ingest`) and time-zone
    /// change does: an upload of theirs commits wholly before or wholly after the correction, so no rollup
    /// is recomputed from samples an upload is adding meanwhile, and the zone that decides their days cannot
    /// change under it. Arrival numbers are left as they are: a download cursor is an arrival number, and a
    /// deleted sample's number is simply never released again.
    static func delete(_ correction: SampleCorrection, of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> Int
    {
        _ = try await SampleStore.lockArrivals(of: userID, on: connection, logger: logger)
        // Times go as exact microsecond text (binding a Date truncates, which would miss the one sample `at`
        // names, or move an inclusive bound).
        let from = correction.from.map(Timestamp.postgresText)
        let to = correction.to.map(Timestamp.postgresText)
        let type = correction.type.code
        // The deleted samples' local days (`sample_day`, as ingest computes them), and the span of their
        // times. A separate statement from the recount: a statement does not see its own CTE's deletion.
        let deleted = try await connection.query(
            """
            WITH deleted AS (
                DELETE FROM samples
                WHERE user_id = \(userID) AND type = \(type)
                  AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
                  AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
                RETURNING at, value
            )
            SELECT count(*), coalesce(array_agg(DISTINCT to_char(
                       sample_day(\(type), at, value, (SELECT time_zone FROM users WHERE account_id = \(userID))), 'YYYY-MM-DD')), '{}'),
                   min(at), max(at)
            FROM deleted
            """, logger: logger
        ).collect().first?.decode((Int64, [String], Date?, Date?).self)
        guard let (count, days, first, last) = deleted, count > 0, let first, let last else { return 0 }
        try await recount(
            userID: userID, type: correction.type, days: days, around: (first, last), on: connection, logger: logger)
        return Int(count)
    }

    /// Recomputes the person's rollups of `type` on `days` from the samples left, as
    /// `rebuild_daily_rollups` (migration 0007) does for all of them: a day with nothing left loses its row.
    ///
    /// Only the samples near `around` (the deleted ones' first and last times) are read, along the primary
    /// key: a sample counts for a local day within a day and a half of its time (a zone is at most 14 hours
    /// off UTC; sleep counts for its end plus six hours, at most 30 hours later), so three days on either
    /// side hold every sample of every touched day, whatever the person's history.
    private static func recount(
        userID: UUID, type: SampleType, days: [String], around span: (first: Date, last: Date), on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let first = Timestamp.postgresText(span.first)
        let last = Timestamp.postgresText(span.last)
        try await connection.query(
            "DELETE FROM daily_rollups WHERE user_id = \(userID) AND type = \(type.code) AND day = ANY(\(days)::date[])", logger: logger)
        try await connection.query(
            """
            WITH zone AS (
                SELECT time_zone FROM users WHERE account_id = \(userID)
            ), nearby AS (
                SELECT type, at, value, sample_day(type, at, value, (SELECT time_zone FROM zone)) AS day
                FROM samples
                WHERE user_id = \(userID) AND type = \(type.code)
                  AND at >= \(first)::timestamptz - interval '3 days' AND at <= \(last)::timestamptz + interval '3 days'
            )
            INSERT INTO daily_rollups (user_id, type, day, count, sum, sum_squares, min, max)
            SELECT \(userID), type, day, count(*), sum(value), sum(value * value), min(value), max(value)
            FROM nearby WHERE day = ANY(\(days)::date[])
            GROUP BY type, day
            """, logger: logger)
    }

    /// How many samples `correction` names now.
    static func count(_ correction: SampleCorrection, of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let from = correction.from.map(Timestamp.postgresText)
        let to = correction.to.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            SELECT count(*) FROM samples
            WHERE user_id = \(userID) AND type = \(correction.type.code)
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
            """, logger: logger)
        return Int(try await rows.collect().first?.decode(Int64.self) ?? 0)
    }

    /// The person's latest `limit` samples of `type`, newest first (backwards along the primary key).
    static func latest(_ type: SampleType, of userID: UUID, limit: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> [Sample]
    {
        let rows = try await connection.query(
            """
            SELECT at, value FROM samples WHERE user_id = \(userID) AND type = \(type.code)
            ORDER BY at DESC LIMIT \(limit)
            """, logger: logger)
        var samples: [Sample] = []
        for try await (at, value) in rows.decode((Date, Double).self) { samples.append(Sample(type: type, value: value, at: at)) }
        return samples
    }
}
