import Foundation
import Logging
import PostgresNIO

/// The SQL of peer statistics' shared cells (`peer_cells`, `peer_days`): the exact aggregates of one day
/// for the mechanism, the noisy cells it produces, and the reads that compose them into a person's page.
enum PeerCellStore {
    /// Every band a day publishes, whoever exists: the first age of each ten-year band, the last one
    /// (120) holding everyone older too. A fixed set, so which cells exist says nothing about anyone.
    static let bands = Array(stride(from: 0, through: 120, by: 10))

    /// The band of someone aged `ageFrom…ageFrom + 9`, among `bands`.
    static func band(ageFrom: Int) -> Int { min(max(0, ageFrom), bands.last!) }

    /// Holds `day` for this transaction, so two instances (or a request and the background loop) never
    /// compute the same day at once; the second waits, then finds it published. A two-key lock: its own
    /// space, apart from the ledger's one-key lock. Bounded by the session's `lock_timeout`; the row is read
    /// so a time-out is thrown here.
    static func lock(_ day: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('data4help.peer_day'), \(Int32(day.dayNumber)))", logger: logger
        ).collect()
    }

    static func isPublished(_ day: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query(
            "SELECT EXISTS (SELECT 1 FROM peer_days WHERE day = \(day.description)::date)", logger: logger
        ).collect().first?.decode(Bool.self) ?? false
    }

    /// The exact aggregates of `type` on `day` for every sex and band (`bands`), empty ones included: each
    /// person's figure for their local day (`RollupFigureSQL.day`), in the band of their age on that day,
    /// clamped, rounded and binned as group cells are (`CellAggregateStore.aggregates`). Reads the
    /// `(type, day)` index: one day of one type, whatever the population's history. People who do not
    /// share `type` (`unshared_types`) are left out: a figure they keep from every company is not
    /// published to everyone else either, even as one of many.
    static func exactCells(day: CalendarDate, type: SampleType, on connection: PostgresConnection, logger: Logger) async throws
        -> [(sex: Sex, ageFrom: Int, aggregate: CellAggregate)]
    {
        let date = day.description
        // Age on the day in whole years, as `Statistics.PeerGroup` counts it (a year older on the birthday;
        // someone born on 29 February on 1 March in a common year), then its band, the last one open-ended.
        let rows = try await connection.query(
            """
            WITH per_person AS (
                SELECT u.sex::text AS sex,
                       least(greatest(extract(year FROM \(date)::date)::int4 - extract(year FROM u.birth_date)::int4
                                      - (to_char(\(date)::date, 'MMDD') < to_char(u.birth_date, 'MMDD'))::int4, 0),
                             \(Int32(bands.last!)))::int4 / 10 * 10 AS age_from,
                       \(unescaped: RollupFigureSQL.day("r", types: [type])) AS figure
                FROM daily_rollups r JOIN users u ON u.account_id = r.user_id
                WHERE r.type = \(type.code) AND r.day = \(date)::date
                  AND NOT EXISTS (SELECT 1 FROM unshared_types x WHERE x.user_id = r.user_id AND x.type = r.type)
            )
            \(unescaped: CellAggregateStore.aggregates(by: "sex, age_from", bounds: .of(type)))
            """, logger: logger)
        var found: [String: CellAggregate] = [:]
        for try await (sex, ageFrom, people, centred, bins, counts) in rows.decode((String, Int32, Int64, Int64, [Int32], [Int64]).self) {
            found["\(sex)\(ageFrom)"] = CellAggregate(
                bucketStart: date, type: type, people: people, centredSum: centred, binIndices: bins, binCounts: counts)
        }
        return Sex.allCases.flatMap { sex in
            bands.map { band in (sex, band, found["\(sex.rawValue)\(band)"] ?? .empty(bucketStart: date, type: type)) }
        }
    }

    /// Stores a day's noisy cells and marks the day published, in the caller's transaction. A cell already
    /// there is kept: a stored cell is never recomputed.
    static func store(_ cells: [PeerCell], day: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws {
        // One statement for the whole day; each cell's bins travel as an array literal ('{1,-2,3}').
        try await connection.query(
            """
            INSERT INTO peer_cells (sex, age_from, type, day, people, centred_sum, bins, loss_micro)
            SELECT c.sex, c.age_from, c.type, \(day.description)::date, c.people, c.centred_sum, c.bins::int8[], c.loss_micro
            FROM unnest(\(cells.map(\.sex.rawValue))::text[], \(cells.map { Int16($0.ageFrom) })::int2[],
                        \(cells.map(\.type.code))::int2[], \(cells.map(\.figures.people))::int8[],
                        \(cells.map(\.figures.centredSum))::int8[],
                        \(cells.map { "{" + $0.figures.bins.map(String.init).joined(separator: ",") + "}" })::text[],
                        \(cells.map(\.figures.loss.micro))::int8[])
                 AS c(sex, age_from, type, people, centred_sum, bins, loss_micro)
            ON CONFLICT (sex, age_from, type, day) DO NOTHING
            """, logger: logger)
        try await connection.query(
            "INSERT INTO peer_days (day) VALUES (\(day.description)::date) ON CONFLICT (day) DO NOTHING", logger: logger)
    }

    /// Days from `from` to `to` not yet published, newest first, at most `limit`.
    static func unpublishedDays(from: CalendarDate, to: CalendarDate, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> [CalendarDate]
    {
        guard from <= to else { return [] }
        let rows = try await connection.query(
            """
            SELECT to_char(d, 'YYYY-MM-DD')
            FROM generate_series(\(to.description)::date::timestamp, \(from.description)::date::timestamp, interval '-1 day') AS d
            WHERE NOT EXISTS (SELECT 1 FROM peer_days p WHERE p.day = d::date)
            ORDER BY d DESC LIMIT \(limit)
            """, logger: logger)
        var days: [CalendarDate] = []
        for try await text in rows.decode(String.self) { if let day = CalendarDate(iso: text) { days.append(day) } }
        return days
    }

    /// The stored cells of one sex, band and type from `from` to `to`, oldest first: a primary-key range,
    /// one row per published day, and nobody's rollups. (The sex is cast to the column's `char`: compared as
    /// text, the column would be cast instead and the key's first column could not be used.)
    static func cells(
        sex: Sex, ageFrom: Int, type: SampleType, from: CalendarDate, to: CalendarDate, on connection: PostgresConnection, logger: Logger
    ) async throws -> [(day: CalendarDate, cell: NoisyCell)] {
        let rows = try await connection.query(
            """
            SELECT to_char(day, 'YYYY-MM-DD'), people, centred_sum, bins, loss_micro FROM peer_cells
            WHERE sex = \(sex.rawValue)::bpchar AND age_from = \(Int16(ageFrom)) AND type = \(type.code)
              AND day BETWEEN \(from.description)::date AND \(to.description)::date
            ORDER BY day
            """, logger: logger)
        var cells: [(CalendarDate, NoisyCell)] = []
        for try await (day, people, sum, bins, loss) in rows.decode((String, Int64, Int64, [Int64], Int64).self) {
            guard let date = CalendarDate(iso: day) else { continue }
            cells.append((date, NoisyCell(people: people, centredSum: sum, bins: bins, loss: PrivacyLoss(micro: loss))))
        }
        return cells
    }
}
