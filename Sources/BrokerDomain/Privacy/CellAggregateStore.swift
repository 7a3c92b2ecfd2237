import Foundation
import Logging
import PostgresNIO

/// The SQL of exact cell aggregates over the daily rollups, for `CellMechanism` alone: per cell, how many
/// people contributed, the sum of their clamped figures and their histogram (`ContributionBounds`). Each
/// person's figure for a bucket is their day's figure, or the bucket's (`RollupFigureSQL`), so a person is
/// one value per cell however many samples they have. Group cells are here; peer cells (`PeerCellStore`)
/// share the clamping, rounding and binning through `aggregates(by:bounds:)`.
package enum CellAggregateStore {
    /// One type's cells for the group `cohort` (person numbers; people erased since are gone from `users`
    /// and so from the cells), one per bucket from the bucket of `from` to that of `to`, empty ones included.
    /// A member who does not share `type` (`unshared_types`, read as of this statement) contributes to none
    /// of its cells, as if they had no data of it.
    package static func groupCells(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> [CellAggregate] {
        let rows = try await connection.query(
            groupQuery(
                cohort: cohort, type: type, bucket: bucket, from: from, to: to,
                then: aggregates(by: "start", as: "to_char(start, 'YYYY-MM-DD')", bounds: .of(type))),
            logger: logger)
        var found: [String: CellAggregate] = [:]
        for try await (start, people, centred, bins, counts) in rows.decode((String, Int64, Int64, [Int32], [Int64]).self) {
            found[start] = CellAggregate(bucketStart: start, type: type, people: people, centredSum: centred, binIndices: bins, binCounts: counts)
        }
        // Every bucket of the range: one nobody contributed to goes through the same noise as any other.
        return bucket.starts(from: from, to: to).map { found[$0.description] ?? .empty(bucketStart: $0.description, type: type) }
    }

    /// A query over a group's cells: its `per_person` CTE (one row per member and bucket: `start`, the
    /// bucket's first day as a `date`, and the member's `figure`, members who do not share `type` left out),
    /// then `rest`, which reads it.
    ///
    /// Issue 33 (bench/README.md, "Group evaluation (part 6)"): the members who do not share `type` are left
    /// out of the cohort's few thousand account ids, not by a probe of `unshared_types` for each of the
    /// ~700,000 member-days (the same people, as `type` is fixed); and `start` stays a `date` until the
    /// last step, so the grid's (bucket, position) groups hash and compare dates, not text.
    private static func groupQuery(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate, then rest: String
    ) -> PostgresQuery {
        let perPerson =
            bucket == .day
            ? "SELECT r.day AS start, \(RollupFigureSQL.day("r", types: [type])) AS figure"
            : "SELECT date_trunc('\(bucket.rawValue)', r.day::timestamp)::date AS start, \(RollupFigureSQL.bucket("r", types: [type])) AS figure"
        let grouping = bucket == .day ? "" : "GROUP BY 1, r.user_id"
        return """
            WITH per_person AS (
                \(unescaped: perPerson)
                FROM daily_rollups r
                WHERE r.type = \(type.code) AND r.day BETWEEN \(from.description)::date AND \(to.description)::date
                  AND r.user_id IN (
                      SELECT u.account_id FROM users u
                      WHERE u.person_number = ANY(\(cohort)::int4[])
                        AND NOT EXISTS (SELECT 1 FROM unshared_types x WHERE x.user_id = u.account_id AND x.type = \(type.code)))
                \(unescaped: grouping)
            )
            \(unescaped: rest)
            """
    }

    /// SQL for where a figure `v` (already clamped) lies on the percentiles' grid of `b`, as an index into
    /// `CellAggregate.bins`: 2j when it is on candidate j (to a billionth of a step), 2j + 1 when it lies
    /// between candidates j and j + 1. The people on a candidate count neither below nor above it.
    static func gridPosition(_ v: String, bounds b: ContributionBounds) -> String {
        let steps = "((\(v) - (\(b.lower))::float8) / (\(b.binWidth))::float8)"
        return "(CASE WHEN abs(\(steps) - round(\(steps))) < 1e-9 THEN 2 * round(\(steps)) ELSE 2 * floor(\(steps)) + 1 END)::int4"
    }

    /// The bench's baseline only (`PrivacyBenchProbe`), never released: per bucket of a group request's cells,
    /// every contributor's figure clamped to the bounds, ascending. The `per_person` rows are `groupCells`'s
    /// own (`groupQuery`), so these are exactly the figures it counts, sums and bins, and a bench can
    /// compute their exact percentiles and run other mechanisms on them.
    package static func clampedFigures(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> [String: [Double]] {
        let b = ContributionBounds.of(type)
        let rest = """
            SELECT to_char(start, 'YYYY-MM-DD'), array_agg(v ORDER BY v)
            FROM (SELECT start, least(greatest(figure, (\(b.lower))::float8), (\(b.upper))::float8) AS v FROM per_person) p
            GROUP BY start
            """
        let rows = try await connection.query(
            groupQuery(cohort: cohort, type: type, bucket: bucket, from: from, to: to, then: rest), logger: logger)
        var figures: [String: [Double]] = [:]
        for try await (start, values) in rows.decode((String, [Double]).self) { figures[start] = values }
        return figures
    }

    /// The rest of a query that starts with a `per_person` CTE (one row per person and cell: the cell's key
    /// columns `keys`, comma-separated, and the person's `figure`): each figure clamped to the bounds, put in
    /// its place on the percentiles' grid (`bin`, `gridPosition`), and rounded to the resolution as its distance from the middle, then per cell the key columns,
    /// people (int8), centred sum (int8), and the non-empty bins (int4[]) with their people (int8[]). The
    /// bounds are constants of the code (`ContributionBounds`), written into the SQL as numbers. `output`
    /// is what the result's first columns show of the keys (default: the keys themselves), so the groups can
    /// be made on compact keys and only their 90-odd results formatted.
    static func aggregates(by keys: String, as output: String? = nil, bounds b: ContributionBounds) -> String {
        let lower = "(\(b.lower))::float8"
        let upper = "(\(b.upper))::float8"
        return """
            , clamped AS (
                SELECT \(keys), v, \(gridPosition("v", bounds: b)) AS bin
                FROM (SELECT \(keys), least(greatest(figure, \(lower)), \(upper)) AS v FROM per_person) p
            ), binned AS (
                SELECT \(keys), bin, count(*) AS people, sum(round((v - (\(b.middle))::float8) / (\(b.resolution))::float8)::int8) AS centred
                FROM clamped GROUP BY \(keys), bin
            )
            SELECT \(output ?? keys), sum(people)::int8, sum(centred)::int8, array_agg(bin::int4 ORDER BY bin), array_agg(people::int8 ORDER BY bin)
            FROM binned GROUP BY \(keys)
            """
    }

    /// The bench's baseline only (`PrivacyBenchProbe`), never released: one type's cells as group results were
    /// computed before differential privacy, the count, mean and p10/p50/p90 (`percentile_cont`) of each
    /// contributor's own unclamped figure, for the buckets that have any.
    package static func unprotectedCells(
        cohort: [Int32], type: SampleType, bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> [(start: String, people: Int64, mean: Double, percentiles: [Double])] {
        let perPerson =
            bucket == .day
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
            )
            SELECT to_char(start, 'YYYY-MM-DD'), count(*)::int8, avg(figure),
                   percentile_cont('{0.1,0.5,0.9}'::float8[]) WITHIN GROUP (ORDER BY figure)
            FROM per_person GROUP BY start
            """, logger: logger)
        return try await rows.collect().map { try $0.decode((String, Int64, Double, [Double]).self) }
    }
}
