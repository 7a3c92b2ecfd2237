import Foundation
import Logging
import PostgresNIO

/// Statistics read the daily rollups, never raw samples.
public struct StatisticsStore: Sendable {
    public let client: DatabasePool

    public init(client: DatabasePool) { self.client = client }

    /// The types of which the person has readings between `from` and `to`: one index range scan, so a page
    /// of charts computes statistics (and peer percentiles) only for the types it will draw.
    public func types(userID: UUID, from: CalendarDate, to: CalendarDate, logger: Logger) async throws -> [SampleType] {
        let rows = try await client.query(
            """
            SELECT DISTINCT type FROM daily_rollups
            WHERE user_id = \(userID) AND day BETWEEN \(from.description)::date AND \(to.description)::date
            """, logger: logger)
        var types: [SampleType] = []
        for try await code in rows.decode(Int16.self) { if let type = SampleType(code: code) { types.append(type) } }
        return SampleType.allCases.filter(types.contains)
    }

    public func own(
        userID: UUID, type: SampleType, from: CalendarDate, to: CalendarDate, bucket: Statistics.Bucket, logger: Logger
    ) async throws -> [Statistics.OwnBucket] {
        let rows = try await client.query(
            """
            SELECT to_char(date_trunc(\(bucket.rawValue), r.day::timestamp), 'YYYY-MM-DD'),
                   sum(r.count)::int8, count(*)::int8, \(unescaped: RollupFigureSQL.bucket("r", types: [type])),
                   \(unescaped: RollupFigureSQL.minimum("r", types: [type])), \(unescaped: RollupFigureSQL.maximum("r", types: [type])),
                   sum(r.sum)
            FROM daily_rollups r
            WHERE r.user_id = \(userID) AND r.type = \(type.code)
              AND r.day BETWEEN \(from.description)::date AND \(to.description)::date
            GROUP BY 1 ORDER BY 1
            """, logger: logger)
        var buckets: [Statistics.OwnBucket] = []
        for try await (start, count, days, mean, min, max, total) in rows.decode((String, Int64, Int64, Double, Double, Double, Double).self) {
            guard let date = CalendarDate(iso: start) else { continue }
            buckets.append(.init(
                start: date, count: Int(count), days: Int(days), mean: mean, min: min, max: max,
                total: type.aggregation == .dailyTotal ? total : nil))
        }
        return buckets
    }

    /// Per bucket, the distribution across peers of each peer's own mean in that bucket; buckets with
    /// fewer than `minimumPeople` contributors are left out, and so is everything when fewer than that
    /// many peers have data at all.
    public func peers(
        excluding userID: UUID, group: Statistics.PeerGroup, type: SampleType, from: CalendarDate, to: CalendarDate,
        bucket: Statistics.Bucket, minimumPeople: Int, today: CalendarDate, logger: Logger
    ) async throws -> (available: Bool, buckets: [Statistics.PeerBucket]) {
        let born = group.birthDates(today: today)
        // Fewer people in the whole band than k: no window can qualify, so the rollups need not be read.
        let bandSize = try await client.query(
            """
            SELECT count(*) FROM users
            WHERE sex = \(group.sex.rawValue) AND birth_date > \(born.after.description)::date
              AND birth_date <= \(born.onOrBefore.description)::date AND account_id <> \(userID)
            """, logger: logger
        ).collect().first?.decode(Int64.self) ?? 0
        guard bandSize >= minimumPeople else { return (false, []) }
        // A band is a small part of the population: each peer's rows are fetched by primary key (user, type,
        // day) rather than scanning everyone's rows of this type. Day buckets are rollup rows already (one per
        // person and day), so only weeks and months are grouped again. Measured in bench/README.md.
        // Each peer's own figure for the bucket (their daily total, or mean daily total, for steps).
        let perPerson = switch bucket {
        case .day: "SELECT r.day AS start, p.account_id AS user_id, \(RollupFigureSQL.day("r", types: [type])) AS mean"
        case .week, .month:
            "SELECT date_trunc('\(bucket.rawValue)', r.day::timestamp)::date AS start, p.account_id AS user_id, "
                + "\(RollupFigureSQL.bucket("r", types: [type])) AS mean"
        }
        let grouping = bucket == .day ? "" : "GROUP BY 1, 2"
        let rows = try await client.query(
            """
            WITH peers AS (
                SELECT account_id FROM users
                WHERE sex = \(group.sex.rawValue) AND birth_date > \(born.after.description)::date
                  AND birth_date <= \(born.onOrBefore.description)::date AND account_id <> \(userID)
            ), qualifying AS (
                SELECT count(*) AS people FROM peers p
                WHERE EXISTS (
                    SELECT 1 FROM daily_rollups r
                    WHERE r.user_id = p.account_id AND r.type = \(type.code)
                      AND r.day BETWEEN \(from.description)::date AND \(to.description)::date)
            ), per_person AS (
                \(unescaped: perPerson)
                FROM peers p CROSS JOIN LATERAL (
                    SELECT type, day, sum, count FROM daily_rollups
                    WHERE user_id = p.account_id AND type = \(type.code)
                      AND day BETWEEN \(from.description)::date AND \(to.description)::date
                ) r
                \(unescaped: grouping)
            )
            SELECT q.people::int8, to_char(b.start, 'YYYY-MM-DD'), b.people::int8, b.mean, b.p10, b.p50, b.p90
            FROM qualifying q
            LEFT JOIN LATERAL (
                SELECT start, count(*) AS people, avg(mean) AS mean,
                       percentile_cont(0.1) WITHIN GROUP (ORDER BY mean) AS p10,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY mean) AS p50,
                       percentile_cont(0.9) WITHIN GROUP (ORDER BY mean) AS p90
                FROM per_person GROUP BY start HAVING count(*) >= \(minimumPeople)
            ) b ON q.people >= \(minimumPeople)
            ORDER BY b.start
            """, logger: logger)
        var available = false
        var buckets: [Statistics.PeerBucket] = []
        for try await (qualifying, start, people, mean, p10, p50, p90) in rows.decode(
            (Int64, String?, Int64?, Double?, Double?, Double?, Double?).self)
        {
            available = qualifying >= minimumPeople
            guard available, let start, let date = CalendarDate(iso: start), let people, let mean, let p10, let p50, let p90
            else { continue }
            buckets.append(.init(start: date, people: Int(people), mean: mean, p10: p10, p50: p50, p90: p90))
        }
        return (available, buckets)
    }
}
