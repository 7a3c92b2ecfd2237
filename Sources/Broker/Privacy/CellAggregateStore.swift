import Foundation
import Logging
import PostgresNIO

/// The SQL of exact cell aggregates over the daily rollups, for `CellMechanism` alone: per bucket, how many
/// people contributed, the sum of their clamped figures and their histogram (`ContributionBounds`). Each
/// person's figure for a bucket is their day's figure, or the bucket's (`RollupFigureSQL`), so a person is
/// one value per cell however many samples they have.
enum CellAggregateStore {
    /// One type's cells for the group `cohort` (person numbers; people erased since are gone from `users`
    /// and so from the cells), one per bucket from the bucket of `from` to that of `to`, empty ones included.
    static func groupCells(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> [CellAggregate] {
        let b = ContributionBounds.of(type)
        let perPerson = bucket == .day
            ? "SELECT r.day AS start, \(RollupFigureSQL.day("r", types: [type])) AS figure"
            : "SELECT date_trunc('\(bucket.rawValue)', r.day::timestamp)::date AS start, \(RollupFigureSQL.bucket("r", types: [type])) AS figure"
        let grouping = bucket == .day ? "" : "GROUP BY 1, r.user_id"
        let rows = try await connection.query(
            """
            WITH per_person AS (
                \(unescaped: perPerson)
                FROM daily_rollups r
                WHERE r.type = \(type.code) AND r.day BETWEEN \(from.description)::date AND \(to.description)::date
                  AND r.user_id IN (SELECT u.account_id FROM users u WHERE u.person_number = ANY(\(cohort)::int4[]))
                \(unescaped: grouping)
            ), clamped AS (
                SELECT start, least(greatest(figure, \(b.lower)::float8), \(b.upper)::float8) AS v FROM per_person
            ), binned AS (
                SELECT start, least(width_bucket(v, \(b.lower)::float8, \(b.upper)::float8, \(b.bins)::int4), \(b.bins)::int4) - 1 AS bin,
                       count(*) AS people, sum(round((v - \(b.middle)::float8) / \(b.resolution)::float8)::int8) AS centred
                FROM clamped GROUP BY 1, 2
            )
            SELECT to_char(start, 'YYYY-MM-DD'), sum(people)::int8, sum(centred)::int8,
                   array_agg(bin::int4 ORDER BY bin), array_agg(people::int8 ORDER BY bin)
            FROM binned GROUP BY start
            """, logger: logger)
        var found: [String: CellAggregate] = [:]
        for try await (start, people, centred, bins, counts) in rows.decode((String, Int64, Int64, [Int32], [Int64]).self) {
            var histogram = [Int64](repeating: 0, count: b.bins)
            for (bin, count) in zip(bins, counts) where histogram.indices.contains(Int(bin)) { histogram[Int(bin)] = count }
            found[start] = CellAggregate(bucketStart: start, type: type, people: people, centredSum: centred, bins: histogram)
        }
        // Every bucket of the range: one nobody contributed to goes through the same noise as any other.
        return bucket.starts(from: from, to: to).map { found[$0.description] ?? .empty(bucketStart: $0.description, type: type) }
    }
}
