import Foundation
import Logging
import PostgresNIO

/// The SQL of peer statistics' shared monthly cells (`peer_month_cells`, `peer_months`): the exact aggregates
/// of one calendar month for the mechanism, the noisy cells it produces, and the reads behind a person's page.
package enum PeerCellStore {
    /// Every band a month publishes, whoever exists: the first age of each ten-year band, the last one
    /// (120) holding everyone older too. A fixed set, so which cells exist says nothing about anyone.
    static let bands = Array(stride(from: 0, through: 120, by: 10))

    /// The band of someone aged `ageFrom…ageFrom + 9`, among `bands`.
    static func band(ageFrom: Int) -> Int { min(max(0, ageFrom), bands.last!) }

    /// Holds `month` (its first day) for this transaction, so two instances (or a request and the background
    /// loop) never compute the same month at once; the second waits, then finds it published. A two-key
    /// lock: its own space, apart from the ledger's one-key lock. Bounded by the session's `lock_timeout`;
    /// the row is read so a time-out is thrown here.
    static func lock(_ month: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('data4help.peer_month'), \(Int32(month.year * 12 + month.month - 1)))", logger: logger
        ).collect()
    }

    static func isPublished(_ month: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query(
            "SELECT EXISTS (SELECT 1 FROM peer_months WHERE month = \(month.description)::date)", logger: logger
        ).collect().first?.decode(Bool.self) ?? false
    }

    /// The exact aggregates of `type` in the month starting on `month` for every sex and band (`bands`), empty
    /// ones included: each person's figure for the month as a group's month bucket computes it
    /// (`RollupFigureSQL.bucket` over their daily rollups of the month: their mean reading, or their mean
    /// daily total over the days with data), in the band of their age on the month's first day, clamped,
    /// rounded and binned as group cells are (`CellAggregateStore.aggregates`). Reads the `(type, day)`
    /// index: one month of one type. People who do not share `type` (`unshared_types`) are left out: a
    /// figure they keep from every company is not published to everyone else either, even as one of many.
    package static func exactCells(month: CalendarDate, type: SampleType, on connection: PostgresConnection, logger: Logger) async throws
        -> [(sex: Sex, ageFrom: Int, aggregate: CellAggregate)]
    {
        let first = month.description
        let rows = try await connection.query(
            """
            \(unescaped: perPerson(month: month, type: type))
            \(unescaped: CellAggregateStore.aggregates(by: "sex, age_from", bounds: .of(type)))
            """, logger: logger)
        var found: [String: CellAggregate] = [:]
        for try await (sex, ageFrom, people, centred, bins, counts) in rows.decode((String, Int32, Int64, Int64, [Int32], [Int64]).self) {
            found["\(sex)\(ageFrom)"] = CellAggregate(
                bucketStart: first, type: type, people: people, centredSum: centred, binIndices: bins, binCounts: counts)
        }
        return Sex.allCases.flatMap { sex in
            bands.map { band in (sex, band, found["\(sex.rawValue)\(band)"] ?? .empty(bucketStart: first, type: type)) }
        }
    }

    /// The bench's yardstick only (`d4h-dev bench peer-accuracy`), never released: per sex and band with
    /// anyone in it, the exact number of people and the exact median of the same clamped figures the cells
    /// are made from (`percentile_cont`).
    package static func exactMedians(month: CalendarDate, type: SampleType, on connection: PostgresConnection, logger: Logger) async throws
        -> [(sex: Sex, ageFrom: Int, people: Int, median: Double)]
    {
        let b = ContributionBounds.of(type)
        let rows = try await connection.query(
            """
            \(unescaped: perPerson(month: month, type: type))
            SELECT sex, age_from, count(*)::int8,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY least(greatest(figure, (\(unescaped: "\(b.lower)"))::float8), (\(unescaped: "\(b.upper)"))::float8))
            FROM per_person GROUP BY sex, age_from
            """, logger: logger)
        var medians: [(Sex, Int, Int, Double)] = []
        for try await (sex, ageFrom, people, median) in rows.decode((String, Int32, Int64, Double).self) {
            guard let sex = Sex(rawValue: sex) else { continue }
            medians.append((sex, Int(ageFrom), Int(people), median))
        }
        return medians
    }

    /// The `per_person` CTE of a month's cells: one row per person with data of `type` in the month starting
    /// on `month` (sex, age_from, figure). Dates and codes are the code's own values, never user input.
    private static func perPerson(month: CalendarDate, type: SampleType) -> String {
        // Age on the month's first day in whole years, as `Statistics.PeerGroup` counts it (a year older on
        // the birthday; someone born on 29 February on 1 March in a common year), then its band, the last
        // one open-ended.
        let first = "'\(month.description)'::date"
        let next = "'\(Statistics.Bucket.month.next(after: month).description)'::date"
        return """
            WITH per_person AS (
                SELECT u.sex::text AS sex,
                       least(greatest(extract(year FROM \(first))::int4 - extract(year FROM u.birth_date)::int4
                                      - (to_char(\(first), 'MMDD') < to_char(u.birth_date, 'MMDD'))::int4, 0),
                             \(bands.last!))::int4 / 10 * 10 AS age_from,
                       \(RollupFigureSQL.bucket("r", types: [type])) AS figure
                FROM daily_rollups r JOIN users u ON u.account_id = r.user_id
                WHERE r.type = \(type.code) AND r.day >= \(first) AND r.day < \(next)
                  AND NOT EXISTS (SELECT 1 FROM unshared_types x WHERE x.user_id = r.user_id AND x.type = r.type)
                GROUP BY r.user_id, u.sex, u.birth_date
            )
            """
    }

    /// Stores a month's noisy cells and marks the month published, in the caller's transaction. A cell
    /// already there is kept: a stored cell is never recomputed.
    static func store(_ cells: [PeerCell], month: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO peer_month_cells (sex, age_from, type, month, people, p10, p50, p90, loss_micro)
            SELECT c.sex, c.age_from, c.type, \(month.description)::date, c.people, c.p10, c.p50, c.p90, c.loss_micro
            FROM unnest(\(cells.map(\.sex.rawValue))::text[], \(cells.map { Int16($0.ageFrom) })::int2[],
                        \(cells.map(\.type.code))::int2[], \(cells.map(\.figures.people))::int8[],
                        \(cells.map(\.figures.p10))::float8[], \(cells.map(\.figures.p50))::float8[],
                        \(cells.map(\.figures.p90))::float8[], \(cells.map(\.figures.loss.micro))::int8[])
                 AS c(sex, age_from, type, people, p10, p50, p90, loss_micro)
            ON CONFLICT (sex, age_from, type, month) DO NOTHING
            """, logger: logger)
        try await connection.query(
            "INSERT INTO peer_months (month) VALUES (\(month.description)::date) ON CONFLICT (month) DO NOTHING", logger: logger)
    }

    /// Which of `months` (first days) are published.
    static func published(_ months: [CalendarDate], on connection: PostgresConnection, logger: Logger) async throws -> Set<CalendarDate> {
        guard !months.isEmpty else { return [] }
        let rows = try await connection.query(
            "SELECT to_char(month, 'YYYY-MM-DD') FROM peer_months WHERE month = ANY(\(months.map(\.description))::date[])", logger: logger)
        var found: Set<CalendarDate> = []
        for try await text in rows.decode(String.self) { if let month = CalendarDate(iso: text) { found.insert(month) } }
        return found
    }

    /// The stored cells of one sex, band and type for the months from `from` to `to` (first days), oldest
    /// first: a primary-key range, one row per published month, and nobody's rollups. (The sex is cast to
    /// the column's `char`: compared as text, the column would be cast and the key could not be used.)
    static func cells(
        sex: Sex, ageFrom: Int, type: SampleType, from: CalendarDate, to: CalendarDate, on connection: PostgresConnection, logger: Logger
    ) async throws -> [(month: CalendarDate, figures: PeerFigures)] {
        let rows = try await connection.query(
            """
            SELECT to_char(month, 'YYYY-MM-DD'), people, p10, p50, p90, loss_micro FROM peer_month_cells
            WHERE sex = \(sex.rawValue)::bpchar AND age_from = \(Int16(ageFrom)) AND type = \(type.code)
              AND month BETWEEN \(from.description)::date AND \(to.description)::date
            ORDER BY month
            """, logger: logger)
        var cells: [(CalendarDate, PeerFigures)] = []
        for try await (month, people, p10, p50, p90, loss) in rows.decode((String, Int64, Double, Double, Double, Int64).self) {
            guard let date = CalendarDate(iso: month) else { continue }
            cells.append((date, PeerFigures(people: people, p10: p10, p50: p50, p90: p90, loss: PrivacyLoss(micro: loss))))
        }
        return cells
    }
}
