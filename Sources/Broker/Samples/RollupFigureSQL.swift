/// `SampleType.aggregation` as SQL over `daily_rollups` rows, for every store that turns rollups into a
/// figure (own and peer statistics, group filters and cells), so none of them can average steps per record.
///
/// A rollup row holds one person's samples of one type on one of their local days (count, sum, min, max).
/// A *day's figure* is the day's total for a cumulative type and the mean reading otherwise; a *bucket's
/// figure* (week, month, a filter's window) is the mean of the daily totals on days with data, or the mean
/// of all the bucket's readings.
enum RollupFigureSQL {
    /// `daily_total` type codes as an SQL array literal: integers from `SampleType`, never user input.
    private static let dailyTotalCodes = "'{\(SampleType.dailyTotalCodes.map(String.init).joined(separator: ","))}'::int2[]"

    /// The day's figure of rollup row `r` (no grouping).
    static func day(_ r: String) -> String {
        "CASE WHEN \(r).type = ANY(\(dailyTotalCodes)) THEN \(r).sum ELSE \(r).sum / \(r).count END"
    }

    /// The figure of a group of one person's rollup rows of one type (an aggregate: use with GROUP BY).
    static func bucket(_ r: String) -> String {
        "CASE WHEN min(\(r).type) = ANY(\(dailyTotalCodes)) THEN avg(\(r).sum) ELSE sum(\(r).sum) / sum(\(r).count) END"
    }

    /// The smallest and largest day's figure (daily totals) or reading, of a group of one type's rows.
    static func minimum(_ r: String) -> String {
        "CASE WHEN min(\(r).type) = ANY(\(dailyTotalCodes)) THEN min(\(r).sum) ELSE min(\(r).min) END"
    }

    static func maximum(_ r: String) -> String {
        "CASE WHEN min(\(r).type) = ANY(\(dailyTotalCodes)) THEN max(\(r).sum) ELSE max(\(r).max) END"
    }
}
