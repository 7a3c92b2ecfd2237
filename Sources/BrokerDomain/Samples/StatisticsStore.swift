import Foundation
import Logging
import PostgresNIO

/// A person's own statistics read their daily rollups, never raw samples (peers' come from `PeerStatistics`).
package enum StatisticsStore {
    /// The types of which the person has readings between `from` and `to`: one index range scan, so a page
    /// of charts computes statistics (and peer percentiles) only for the types it will draw.
    package static func types(
        userID: UUID, from: CalendarDate, to: CalendarDate, on connection: PostgresConnection, logger: Logger
    ) async throws -> [SampleType] {
        let rows = try await connection.query(
            """
            SELECT DISTINCT type FROM daily_rollups
            WHERE user_id = \(userID) AND day BETWEEN \(from.description)::date AND \(to.description)::date
            """, logger: logger)
        var types: [SampleType] = []
        for try await code in rows.decode(Int16.self) { if let type = SampleType(code: code) { types.append(type) } }
        return SampleType.allCases.filter(types.contains)
    }

    package static func own(
        userID: UUID, type: SampleType, from: CalendarDate, to: CalendarDate, bucket: Statistics.Bucket, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [Statistics.OwnBucket] {
        let rows = try await connection.query(
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
            buckets.append(
                .init(
                    start: date, count: Int(count), days: Int(days), mean: mean, min: min, max: max,
                    total: type.aggregation == .dailyTotal ? total : nil))
        }
        return buckets
    }
}
