import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The SQL of positions (`0015_positions.sql`).
package enum PositionStore {
    /// Stores positions on the caller's transaction; a position whose `at` is already stored for the person,
    /// or repeated earlier in the batch, is a duplicate. Arrival numbers come from the person's sample
    /// arrival sequence, under its row lock, and the batch is recorded in `sample_batches` as an upload of
    /// samples is: what a single request releases "since arrival N" is exact for both.
    package static func ingest(_ positions: [Position], for userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> (accepted: Int, duplicates: Int)
    {
        guard !positions.isEmpty else { return (0, 0) }
        let base = try await SampleStore.lockArrivals(of: userID, on: connection, logger: logger)
        try await connection.query(
            """
            CREATE TEMP TABLE IF NOT EXISTS staged_positions (
                ordinal integer NOT NULL, at timestamptz NOT NULL, latitude double precision NOT NULL,
                longitude double precision NOT NULL, elevation double precision, accuracy double precision
            ) ON COMMIT DELETE ROWS
            """, logger: logger)
        try await connection.query("TRUNCATE staged_positions", logger: logger)
        try await connection.copyFrom(
            table: "staged_positions", columns: ["ordinal", "at", "latitude", "longitude", "elevation", "accuracy"], logger: logger
        ) { writer in
            var buffer = ByteBuffer()
            for (ordinal, position) in positions.enumerated() {
                let elevation = position.elevation.map { "\($0)" } ?? "\\N"
                let accuracy = position.accuracy.map { "\($0)" } ?? "\\N"
                buffer.writeString(
                    "\(ordinal)\t\(Timestamp.postgresText(position.at))\t\(position.latitude)\t\(position.longitude)\t\(elevation)\t\(accuracy)\n")
                if buffer.readableBytes > 200 * 1024 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
        let (accepted, distinct) =
            try await connection.query(
                """
                WITH batch AS (
                    SELECT DISTINCT ON (at) ordinal, at, latitude, longitude, elevation, accuracy FROM staged_positions ORDER BY at, ordinal
                ), inserted AS (
                    INSERT INTO positions (user_id, at, latitude, longitude, elevation, accuracy, arrival)
                    SELECT \(userID), at, latitude, longitude, elevation, accuracy, \(base) + row_number() OVER (ORDER BY ordinal)
                    FROM batch
                    ON CONFLICT DO NOTHING
                    RETURNING 1
                ), advanced AS (
                    UPDATE sample_arrivals SET last_arrival = \(base) + (SELECT count(*) FROM batch) WHERE user_id = \(userID)
                )
                SELECT count(*), (SELECT count(*) FROM batch) FROM inserted
                """, logger: logger
            ).collect().first?.decode((Int64, Int64).self) ?? (Int64(0), Int64(0))
        if accepted > 0 {
            // The batch's last arrival number: its distinct positions only (a repeat takes none).
            try await connection.query(
                """
                INSERT INTO sample_batches (user_id, last_arrival, received_at)
                VALUES (\(userID), \(base + distinct), clock_timestamp())
                """, logger: logger)
            try await announceArrival(userID: userID, after: base, upTo: base + distinct, on: connection, logger: logger)
        }
        return (Int(accepted), positions.count - Int(accepted))
    }

    /// Tells the person's live subscribers that asked for `position` that new positions are available, only
    /// those to whom this upload releases one (inside the window). Their cursor is where their last download
    /// of positions before this upload ended: the last released position's arrival, never a sample's.
    private static func announceArrival(userID: UUID, after base: Int64, upTo last: Int64, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        let rows = try await connection.query(
            """
            SELECT r.id, r.third_party_id, coalesce((
                       SELECT max(p.arrival) FROM positions p
                       WHERE p.user_id = r.user_id AND p.arrival <= \(base)
                         AND (r.window_from IS NULL OR p.at >= r.window_from)
                         AND (r.window_to IS NULL OR p.at <= r.window_to)), 0)
            FROM single_requests r
            WHERE r.user_id = \(userID) AND r.status = 'accepted' AND r.subscription_days IS NOT NULL
              AND r.ended_at IS NULL AND r.ends_at > now() AND \(RequestedType.positionCode)::int2 = ANY(r.types)
              AND EXISTS (
                  SELECT 1 FROM positions p
                  WHERE p.user_id = r.user_id AND p.arrival > \(base) AND p.arrival <= \(last)
                    AND (r.window_from IS NULL OR p.at >= r.window_from)
                    AND (r.window_to IS NULL OR p.at <= r.window_to))
            """, logger: logger)
        let subscribers = try await rows.collect().map { try $0.decode((UUID, UUID, Int64).self) }
        try await SampleStore.announce(.subscriptionPositionsAvailable, to: subscribers, kind: .positions, on: connection, logger: logger)
    }

    /// A page of the person's positions in time order, within [from, to], after `cursor`.
    package static func list(
        userID: UUID, from: Date?, to: Date?, after cursor: Date?, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> (positions: [Position], next: Date?) {
        // Exact microsecond text: binding a Date truncates, which would move a bound or the cursor.
        let from = from.map(Timestamp.postgresText)
        let to = to.map(Timestamp.postgresText)
        let after = cursor.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            SELECT at, latitude, longitude, elevation, accuracy FROM positions
            WHERE user_id = \(userID)
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
              AND (\(after)::timestamptz IS NULL OR at > \(after)::timestamptz)
            ORDER BY at
            LIMIT \(limit + 1)
            """, logger: logger)
        var positions: [Position] = []
        for try await (at, latitude, longitude, elevation, accuracy) in rows.decode((Date, Double, Double, Double?, Double?).self) {
            positions.append(Position(at: at, latitude: latitude, longitude: longitude, elevation: elevation, accuracy: accuracy))
        }
        guard positions.count > limit else { return (positions, nil) }
        positions.removeLast()
        return (positions, positions.last?.at)
    }

    /// Creates the partition of positions for the month of `month` unless it exists, moving that month's rows out of
    /// the default partition; returns whether it created it. One statement, so one short transaction a month.
    static func ensurePartition(month: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query("SELECT ensure_month_partition('positions', \(month.description)::date)", logger: logger)
            .collect().first?.decode(Bool.self) ?? false
    }
}
