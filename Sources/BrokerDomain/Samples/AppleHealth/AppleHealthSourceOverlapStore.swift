import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Counts each period of a cumulative type once when several sources recorded it, as the Health app does: an
/// iPhone and an Apple Watch both count the steps of one walk, and summing both would double the day's total.
///
/// The records are staged in a temporary table of the import's transaction (the database holds them, not the
/// server, so memory stays constant whatever the export's size). At the end, each record keeps the part of its
/// period that no higher-priority source (`AppleHealthParser.sourcePriority`) of the same type covers, and its
/// value in proportion: a phone record half covered by the watch keeps half its steps. A record covered whole is
/// dropped. Then the kept records are read back page by page and stored like any other sample.
enum AppleHealthSourceOverlapStore {
    /// Adds records to the stage (created on first use, dropped at commit).
    static func stage(_ records: [AppleHealthSourcedRecord], on connection: PostgresConnection, logger: Logger) async throws {
        guard !records.isEmpty else { return }
        try await connection.query(
            """
            CREATE TEMP TABLE IF NOT EXISTS staged_sourced_records (
                type smallint NOT NULL, source integer NOT NULL, start timestamptz NOT NULL, stop timestamptz NOT NULL,
                value double precision NOT NULL
            ) ON COMMIT DROP
            """, logger: logger)
        try await connection.copyLines(
            records, into: "staged_sourced_records", columns: ["type", "source", "start", "stop", "value"], logger: logger
        ) { record, buffer in
            let start = Timestamp.postgresText(Date(timeIntervalSince1970: record.start))
            let stop = Timestamp.postgresText(Date(timeIntervalSince1970: record.end))
            buffer.writeString("\(record.type.code)\t\(record.source)\t\(start)\t\(stop)\t\(record.value)\n")
        }
    }

    /// Resolves the overlaps; returns how many records were covered whole, by type, or nil when the export had
    /// no cumulative record at all (a heart-rate-only export): then nothing was staged and there are no kept
    /// records to page through (`keptPage` must not be called).
    static func resolve(priority: [Int32], on connection: PostgresConnection, logger: Logger) async throws -> [SampleType: Int]? {
        let staged =
            try await connection.query(
                "SELECT to_regclass('pg_temp.staged_sourced_records') IS NOT NULL", logger: logger
            ).collect().first?.decode(Bool.self) ?? false
        guard staged else { return nil }
        try await connection.query("CREATE INDEX ON staged_sourced_records (type, start)", logger: logger)
        try await connection.query("ANALYZE staged_sourced_records", logger: logger)
        // For each record, the union of the periods of higher-priority sources overlapping it (found through
        // the index: they start at most the type's longest record before it); the uncovered share of its period
        // is what it keeps. A record without duration is kept unless a higher source's period contains it.
        try await connection.query(
            """
            CREATE TEMP TABLE resolved_sourced_records ON COMMIT DROP AS
            WITH longest AS (
                SELECT type, max(stop - start) AS span, count(DISTINCT source) AS sources
                FROM staged_sourced_records GROUP BY type
            ), resolved AS (
                SELECT r.type, r.start, r.value, c.covered,
                       CASE WHEN c.covered IS NULL THEN 1.0
                            WHEN r.stop = r.start THEN CASE WHEN c.covered @> r.start THEN 0.0 ELSE 1.0 END
                            ELSE (SELECT coalesce(sum(extract(epoch FROM upper(x) - lower(x))), 0)
                                  FROM unnest(tstzmultirange(tstzrange(r.start, r.stop)) - c.covered) x)
                                 / extract(epoch FROM r.stop - r.start)
                       END AS kept
                FROM staged_sourced_records r
                JOIN longest l ON l.type = r.type
                LEFT JOIN LATERAL (
                    SELECT range_agg(tstzrange(h.start, h.stop)) AS covered
                    FROM staged_sourced_records h
                    -- A type only one source recorded (a phone alone) has nothing to resolve: a one-time
                    -- filter skips the probe for each of its records.
                    WHERE l.sources > 1 AND h.type = r.type AND h.start >= r.start - l.span AND h.start <= r.stop
                      AND h.stop > r.start AND (h.start < r.stop OR r.stop = r.start)
                      AND array_position(\(priority)::int4[], h.source) < array_position(\(priority)::int4[], r.source)
                ) c ON true
            )
            SELECT row_number() OVER (ORDER BY type, start, value DESC) AS ordinal, type, start, value * kept AS value,
                   kept = 0 AS dropped
            FROM resolved
            """, logger: logger)
        // Pages are read by ordinal: without this index every page would sort the whole table again.
        try await connection.query("CREATE UNIQUE INDEX ON resolved_sourced_records (ordinal)", logger: logger)
        try await connection.query("ANALYZE resolved_sourced_records", logger: logger)
        var dropped: [SampleType: Int] = [:]
        let rows = try await connection.query(
            "SELECT type, count(*) FROM resolved_sourced_records WHERE dropped GROUP BY type", logger: logger)
        for try await (code, count) in rows.decode((Int16, Int64).self) {
            if let type = SampleType(code: code) { dropped[type] = Int(count) }
        }
        return dropped
    }

    /// The next `limit` kept records after `ordinal` (0 to begin), with the last ordinal read.
    static func keptPage(after ordinal: Int64, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> (samples: [Sample], last: Int64)
    {
        let rows = try await connection.query(
            """
            SELECT ordinal, type, start, value FROM resolved_sourced_records
            WHERE ordinal > \(ordinal) AND NOT dropped ORDER BY ordinal LIMIT \(limit)
            """, logger: logger)
        var samples: [Sample] = []
        var last = ordinal
        for try await (ordinal, code, start, value) in rows.decode((Int64, Int16, Date, Double).self) {
            last = ordinal
            if let type = SampleType(code: code) { samples.append(Sample(type: type, value: value, at: start)) }
        }
        return (samples, last)
    }
}
