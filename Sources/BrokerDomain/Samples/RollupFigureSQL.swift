/// `SampleType.aggregation` as SQL over `daily_rollups` rows, for every store that turns rollups into a
/// figure (own and peer statistics, group filters and cells), so none of them can average steps per record.
///
/// A rollup row holds one person's samples of one type on one of their local days (count, sum, min, max).
/// A *day's figure* is the day's total for a cumulative type and the mean reading otherwise; a *bucket's
/// figure* (week, month, a filter's window) is the mean of the daily totals on days with data, or the mean
/// of all the bucket's readings.
/// Each takes the types the query reads: when they share one aggregation (a statistics chart, or a group
/// request of heart rate and pressure) the expression is that aggregation's alone, so the database does not
/// evaluate a CASE for every one of a population's rollup rows; only a mix of kinds gets the CASE.
enum RollupFigureSQL {
    /// `daily_total` type codes as an SQL array literal: integers from `SampleType`, never user input.
    private static let dailyTotalCodes = "'{\(SampleType.dailyTotalCodes.map(String.init).joined(separator: ","))}'::int2[]"

    /// The aggregation all of `types` share, or nil for a mix.
    private static func shared(_ types: [SampleType]) -> SampleAggregation? {
        let kinds = Set(types.map(\.aggregation))
        return kinds.count == 1 ? kinds.first : nil
    }

    /// `total` for daily-total types, `mean` for the others, a CASE on the row's type for a mix.
    private static func choose(_ r: String, _ types: [SampleType], total: String, mean: String, byType: String) -> String {
        switch shared(types) {
        case .dailyTotal?: total
        case .mean?: mean
        case nil: "CASE WHEN \(byType) = ANY(\(dailyTotalCodes)) THEN \(total) ELSE \(mean) END"
        }
    }

    /// The day's figure of rollup row `r` (no grouping).
    static func day(_ r: String, types: [SampleType]) -> String {
        choose(r, types, total: "\(r).sum", mean: "\(r).sum / \(r).count", byType: "\(r).type")
    }

    /// The figure of a group of one person's rollup rows of one type (an aggregate: use with GROUP BY type).
    static func bucket(_ r: String, types: [SampleType]) -> String {
        choose(r, types, total: "avg(\(r).sum)", mean: "sum(\(r).sum) / sum(\(r).count)", byType: "min(\(r).type)")
    }

    /// The smallest and largest day's figure (daily totals) or reading, of a group of one type's rows.
    static func minimum(_ r: String, types: [SampleType]) -> String {
        choose(r, types, total: "min(\(r).sum)", mean: "min(\(r).min)", byType: "min(\(r).type)")
    }

    static func maximum(_ r: String, types: [SampleType]) -> String {
        choose(r, types, total: "max(\(r).sum)", mean: "max(\(r).max)", byType: "min(\(r).type)")
    }
}
