import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The SQL of positions (`0015_positions.sql`).
package enum PositionStore {
    /// What the ingest statement answers: positions stored (the live subscribers' events it queued itself,
    /// `announcementsSQL`).
    typealias IngestRow = Int64

    /// The ingest of a batch given as bound arrays (`bindArrays`), prepared once per connection as `SampleStore`'s is.
    struct IngestFromArrays: PostgresPreparedStatement {
        static let name = "d4h_position_ingest_arrays"
        static let sql = ingestSQL(
            staged: """
                SELECT (n - 1)::integer AS ordinal, at, latitude, longitude,
                       CASE WHEN has_elevation THEN elevation END AS elevation, CASE WHEN has_accuracy THEN accuracy END AS accuracy
                FROM unnest($4::text[]::timestamptz[], $5::float8[], $6::float8[], $7::bool[], $8::float8[], $9::bool[], $10::float8[])
                     WITH ORDINALITY AS u(at, latitude, longitude, has_elevation, elevation, has_accuracy, accuracy, n)
                """)
        typealias Row = IngestRow
        var userID: UUID
        var base: Int64
        var positions: [Position]

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(base)
            binds.append(RequestedType.positionCode)
            PositionStore.bindArrays(positions, to: &binds)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The ingest of a batch staged by COPY in the session's `staged_positions` (`stage`).
    struct IngestFromStagedTable: PostgresPreparedStatement {
        static let name = "d4h_position_ingest_staged"
        static let sql = ingestSQL(staged: "SELECT ordinal, at, latitude, longitude, elevation, accuracy FROM staged_positions")
        typealias Row = IngestRow
        var userID: UUID
        var base: Int64

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(base)
            binds.append(RequestedType.positionCode)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A phone's upload of positions on its own in one statement, committed as it ends, as
    /// `SampleStore.ingestAlone` does for samples; nil (and nothing written) when it could not finish alone.
    package static func ingestAlone(_ positions: [Position], for userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws -> (accepted: Int, duplicates: Int)?
    {
        guard !positions.isEmpty, positions.count <= SampleStore.boundArrayLimit else { return nil }
        do {
            let accepted = try await connection.preparedRow(IngestAlone(userID: userID, positions: positions), logger: logger)
            try await connection.confirmAutocommit(logger: logger)
            return (Int(accepted), positions.count - Int(accepted))
        } catch  where PostgresErrors.uploadNeedsTransaction(error) {
            return nil
        }
    }

    /// The positions as seven parallel arrays: times as exact microsecond text (binding a Date truncates); an
    /// absent elevation or accuracy as a false flag beside a placeholder, since arrays of optionals do not bind.
    static func bindArrays(_ positions: [Position], to binds: inout PostgresBindings) {
        binds.append(positions.map { Timestamp.postgresText($0.at) })
        binds.append(positions.map(\.latitude))
        binds.append(positions.map(\.longitude))
        binds.append(positions.map { $0.elevation != nil })
        binds.append(positions.map { $0.elevation ?? 0 })
        binds.append(positions.map { $0.accuracy != nil })
        binds.append(positions.map { $0.accuracy ?? 0 })
    }

    /// `ingestAlone`'s statement: the arrival lock taken inside it, and the checks that it may commit alone
    /// (`SampleStore.IngestAlone` explains them). `$1` the person, `$2` the type code of positions in a
    /// request, `$3`… the positions as `IngestFromArrays` binds them.
    struct IngestAlone: PostgresPreparedStatement {
        static let name = "d4h_position_ingest_alone"
        static let sql = """
            WITH staged AS (
                SELECT (n - 1)::integer AS ordinal, at, latitude, longitude,
                       CASE WHEN has_elevation THEN elevation END AS elevation, CASE WHEN has_accuracy THEN accuracy END AS accuracy
                FROM unnest($3::text[]::timestamptz[], $4::float8[], $5::float8[], $6::bool[], $7::float8[], $8::bool[], $9::float8[])
                     WITH ORDINALITY AS u(at, latitude, longitude, has_elevation, elevation, has_accuracy, accuracy, n)
            ), batch AS (
                SELECT DISTINCT ON (at) ordinal, at, latitude, longitude, elevation, accuracy FROM staged ORDER BY at, ordinal
            ), seen AS (
                SELECT coalesce((SELECT version FROM sample_arrivals WHERE user_id = $1), -1) AS version
            ), locked AS (
                INSERT INTO sample_arrivals AS a (user_id, last_arrival) VALUES ($1, (SELECT count(*) FROM batch))
                ON CONFLICT (user_id) DO UPDATE SET last_arrival = a.last_arrival + excluded.last_arrival, version = a.version + 1
                RETURNING last_arrival, version
            ), base AS (
                SELECT last_arrival - (SELECT count(*) FROM batch) AS arrival, version FROM locked
            ), inserted AS (
                INSERT INTO positions (user_id, at, latitude, longitude, elevation, accuracy, arrival)
                SELECT $1, at, latitude, longitude, elevation, accuracy, (SELECT arrival FROM base) + row_number() OVER (ORDER BY ordinal)
                FROM batch
                ON CONFLICT DO NOTHING
                RETURNING at
            ), recorded AS (
                INSERT INTO sample_batches (user_id, last_arrival, received_at)
                SELECT $1, (SELECT last_arrival FROM locked), clock_timestamp() WHERE EXISTS (SELECT 1 FROM inserted)
            ), \(announcementsSQL(arrivalBefore: "(SELECT arrival FROM base)", positionCode: "$2"))
            -- As `SampleStore.IngestAlone`'s: it stands only if no one held the lock after its snapshot.
            SELECT CASE
                       WHEN (SELECT version FROM base) <> (SELECT version FROM seen) + 1
                           THEN upload_needs_transaction('the arrival lock was held after the snapshot')
                   END IS NULL,
                   (SELECT count(*) FROM inserted)
            """
        typealias Row = Int64
        var userID: UUID
        var positions: [Position]

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(RequestedType.positionCode)
            PositionStore.bindArrays(positions, to: &binds)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((Bool, Int64).self).1 }
    }

    /// Stores positions on the caller's transaction; a position whose `at` is already stored for the person,
    /// or repeated earlier in the batch, is a duplicate. Arrival numbers come from the person's sample
    /// arrival sequence, under its row lock, and the batch is recorded in `sample_batches` as an upload of
    /// samples is: what a single request releases "since arrival N" is exact for both.
    package static func ingest(_ positions: [Position], for userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> (accepted: Int, duplicates: Int)
    {
        guard !positions.isEmpty else { return (0, 0) }
        let base = try await SampleStore.lockArrivals(of: userID, on: connection, logger: logger)
        let accepted: IngestRow
        if positions.count <= SampleStore.boundArrayLimit {
            accepted = try await connection.preparedRow(IngestFromArrays(userID: userID, base: base, positions: positions), logger: logger)
        } else {
            try await stage(positions, on: connection, logger: logger)
            accepted = try await connection.preparedRow(IngestFromStagedTable(userID: userID, base: base), logger: logger)
        }
        return (Int(accepted), positions.count - Int(accepted))
    }

    /// The ingest statement around a batch's rows (`staged` selects ordinal, at, latitude, longitude, elevation,
    /// accuracy), with `$1` the person, `$2` their last arrival number before the batch, `$3` the type code of
    /// positions in a request.
    private static func ingestSQL(staged: String) -> String {
        // One statement, as `SampleStore.ingest`: the positions, the arrival number, the batch's record and the
        // live subscribers' events (`announcementsSQL`).
        return """
            WITH staged AS (
                \(staged)
            ), batch AS (
                SELECT DISTINCT ON (at) ordinal, at, latitude, longitude, elevation, accuracy FROM staged ORDER BY at, ordinal
            ), inserted AS (
                INSERT INTO positions (user_id, at, latitude, longitude, elevation, accuracy, arrival)
                SELECT $1, at, latitude, longitude, elevation, accuracy, $2 + row_number() OVER (ORDER BY ordinal)
                FROM batch
                ON CONFLICT DO NOTHING
                RETURNING at
            ), advanced AS (
                UPDATE sample_arrivals SET last_arrival = $2 + (SELECT count(*) FROM batch) WHERE user_id = $1
            ), recorded AS (
                -- The batch's last arrival number: its distinct positions only (a repeat takes none).
                INSERT INTO sample_batches (user_id, last_arrival, received_at)
                SELECT $1, $2 + (SELECT count(*) FROM batch), clock_timestamp() WHERE EXISTS (SELECT 1 FROM inserted)
            ), \(announcementsSQL(arrivalBefore: "$2", positionCode: "$3"))
            SELECT (SELECT count(*) FROM inserted)
            """
    }

    /// The CTEs, after `inserted`, that queue `subscription.positions_available` for the person's live
    /// subscribers that asked for `position` to whom this upload releases one (inside the window), each with
    /// where their last download of positions before this upload ended (the last released position's arrival,
    /// never a sample's), as `SampleStore.announcementsSQL` does for samples. `arrivalBefore` is the SQL of
    /// the person's last arrival number before the batch, `positionCode` of the type code of positions in a request.
    private static func announcementsSQL(arrivalBefore: String, positionCode: String) -> String {
        """
        subscribers AS (
            -- A function (migration 0052), so that the scan of every partition is set up only when called.
            SELECT r.id, r.third_party_id,
                   subscriber_positions_arrival($1, \(arrivalBefore), r.window_from, r.window_to) AS arrival
            FROM single_requests r
            WHERE r.user_id = $1 AND r.status = 'accepted' AND r.subscription_days IS NOT NULL
              AND r.ended_at IS NULL AND r.ends_at > now() AND \(positionCode)::int2 = ANY(r.types)
              AND EXISTS (
                  SELECT 1 FROM inserted i
                  WHERE (r.window_from IS NULL OR i.at >= r.window_from) AND (r.window_to IS NULL OR i.at <= r.window_to))
        ), \(SampleStore.announcedSQL(.subscriptionPositionsAvailable))
        """
    }

    /// Fills the session's temporary table of staged positions by COPY (created on the connection's first use).
    private static func stage(_ positions: [Position], on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            CREATE TEMP TABLE IF NOT EXISTS staged_positions (
                ordinal integer NOT NULL, at timestamptz NOT NULL, latitude double precision NOT NULL,
                longitude double precision NOT NULL, elevation double precision, accuracy double precision
            ) ON COMMIT DELETE ROWS
            """, logger: logger)
        try await connection.query("TRUNCATE staged_positions", logger: logger)
        try await connection.copyLines(
            positions.enumerated(), into: "staged_positions",
            columns: ["ordinal", "at", "latitude", "longitude", "elevation", "accuracy"], logger: logger
        ) { item, buffer in
            let (ordinal, position) = item
            let elevation = position.elevation.map { "\($0)" } ?? "\\N"
            let accuracy = position.accuracy.map { "\($0)" } ?? "\\N"
            buffer.writeString(
                "\(ordinal)\t\(Timestamp.postgresText(position.at))\t\(position.latitude)\t\(position.longitude)\t\(elevation)\t\(accuracy)\n")
        }
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
