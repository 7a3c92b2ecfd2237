import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The SQL of samples: ingest through COPY, reads in time order, and the rollups both maintain.
package enum SampleStore {
    /// How many samples were new, and how many were already stored (or repeated within the batch).
    package struct IngestResult: Sendable, Equatable {
        package var accepted: Int
        /// Not stored: already stored, or repeated within what was sent.
        package var duplicates: Int
        /// Of the duplicates, those stored before (by an earlier upload, or before `existingUpTo`).
        package var alreadyThere: Int
        /// The person's last arrival number before this batch: pass it as `existingUpTo` to later batches of
        /// the same import so that "already there" keeps meaning "before the import began".
        package var arrivalBase: Int64

        /// What a phone is told of its upload.
        package var upload: UploadResult { UploadResult(accepted: accepted, duplicates: duplicates) }
    }

    /// A phone's upload as its answer counts it (`POST /v1/me/samples`): the one-statement path does not tell
    /// duplicates stored before from repeats within the batch (only imports report that, from `IngestResult`).
    package struct UploadResult: Sendable, Equatable {
        package var accepted: Int
        /// Not stored: already stored, or repeated within what was sent.
        package var duplicates: Int
    }

    /// Batches of at most this many samples reach the statement as bound arrays; larger ones through a temporary
    /// table filled by COPY. A phone's upload of a few samples is then one statement (`ingestAlone`), or two in
    /// a transaction (the arrival lock and the ingest) instead of seven, and a large batch keeps COPY's speed.
    static let boundArrayLimit = 1000

    /// What the ingest statement answers: samples stored, and of the others those stored before (the live
    /// subscribers' events it queued itself, `announcementsSQL`).
    typealias IngestRow = (Int64, Int64)

    /// The ingest of a batch given as bound arrays (`$4` types, `$5` times, `$6` values). Prepared once per
    /// connection: planning the statement (samples and each of its monthly partitions, the rollups, the
    /// subscribers) cost PostgreSQL more than running it for a phone's few samples.
    struct IngestFromArrays: PostgresPreparedStatement {
        static let name = "d4h_sample_ingest_arrays"
        static let sql = ingestSQL(
            staged: """
                SELECT (n - 1)::integer AS ordinal, type, at, value
                FROM unnest($4::int2[], $5::text[]::timestamptz[], $6::float8[]) WITH ORDINALITY AS u(type, at, value, n)
                """)
        typealias Row = IngestRow
        var userID: UUID
        var base: Int64
        var existingUpTo: Int64
        var types: [Int16]
        /// Exact microsecond text: binding a Date truncates.
        var times: [String]
        var values: [Double]

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(base)
            binds.append(existingUpTo)
            binds.append(types)
            binds.append(times)
            binds.append(values)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The ingest of a batch staged by COPY in the session's `staged_samples` (`stage`).
    struct IngestFromStagedTable: PostgresPreparedStatement {
        static let name = "d4h_sample_ingest_staged"
        static let sql = ingestSQL(staged: "SELECT ordinal, type, at, value FROM staged_samples")
        typealias Row = IngestRow
        var userID: UUID
        var base: Int64
        var existingUpTo: Int64

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(base)
            binds.append(existingUpTo)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A phone's upload on its own (at most `boundArrayLimit` samples, nothing else to write with it) in one
    /// statement, committed as it ends: two round trips fewer than `ingest` in a transaction (its BEGIN, lock
    /// and COMMIT). Nil when it could not finish alone, and then nothing was written: someone held the
    /// person's arrival lock after the statement's snapshot (a concurrent upload, correction or change of
    /// zone committed while it waited), so parts of it read too old a state. The caller then stores the batch
    /// with `ingest` in a transaction. Live subscribers' events are queued by the statement itself.
    package static func ingestAlone(_ samples: [Sample], for userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws -> UploadResult?
    {
        guard !samples.isEmpty, samples.count <= boundArrayLimit else { return nil }
        do {
            let inserted = try await connection.preparedRow(
                IngestAlone(
                    userID: userID, types: samples.map(\.type.code), times: samples.map { Timestamp.postgresText($0.at) },
                    values: samples.map(\.value)), logger: logger)
            try await connection.confirmAutocommit(logger: logger)
            return UploadResult(accepted: Int(inserted), duplicates: samples.count - Int(inserted))
        } catch  where PostgresErrors.uploadNeedsTransaction(error) {
            return nil
        }
    }

    /// `ingestAlone`'s statement: `ingestSQL`'s, with the arrival lock taken inside it and the checks that it
    /// may commit alone. `$1` the person, `$2` types, `$3` times as exact text, `$4` values.
    struct IngestAlone: PostgresPreparedStatement {
        static let name = "d4h_sample_ingest_alone"
        static let sql = """
            WITH staged AS (
                SELECT (n - 1)::integer AS ordinal, type, at, value
                FROM unnest($2::int2[], $3::text[]::timestamptz[], $4::float8[]) WITH ORDINALITY AS u(type, at, value, n)
            ), batch AS (
                SELECT DISTINCT ON (type, at) ordinal, type, at, value FROM staged ORDER BY type, at, ordinal
            ), seen AS (
                -- The arrival row's version in this statement's snapshot (-1: no row yet, a first upload).
                SELECT coalesce((SELECT version FROM sample_arrivals WHERE user_id = $1), -1) AS version
            ), locked AS (
                -- The lock, and the batch's arrival numbers taken at once: the row is written once per statement.
                INSERT INTO sample_arrivals AS a (user_id, last_arrival) VALUES ($1, (SELECT count(*) FROM batch))
                ON CONFLICT (user_id) DO UPDATE SET last_arrival = a.last_arrival + excluded.last_arrival, version = a.version + 1
                RETURNING last_arrival, version
            ), base AS (
                SELECT last_arrival - (SELECT count(*) FROM batch) AS arrival, version FROM locked
            ), inserted AS (
                INSERT INTO samples (user_id, type, at, value, arrival)
                SELECT $1, type, at, value, (SELECT arrival FROM base) + row_number() OVER (ORDER BY ordinal) FROM batch
                ON CONFLICT DO NOTHING
                RETURNING type, at, value
            ), zone AS (
                SELECT time_zone FROM users WHERE account_id = $1
            ), rolled_up AS (
                INSERT INTO daily_rollups AS r (user_id, type, day, count, sum, sum_squares, min, max)
                SELECT $1, type, sample_day(type, at, value, (SELECT time_zone FROM zone)),
                       count(*), sum(value), sum(value * value), min(value), max(value)
                FROM inserted GROUP BY type, 3
                ON CONFLICT (user_id, type, day) DO UPDATE SET
                    count = r.count + excluded.count, sum = r.sum + excluded.sum,
                    sum_squares = r.sum_squares + excluded.sum_squares,
                    min = least(r.min, excluded.min), max = greatest(r.max, excluded.max)
            ), recorded AS (
                INSERT INTO sample_batches (user_id, last_arrival, received_at)
                SELECT $1, (SELECT last_arrival FROM locked), clock_timestamp() WHERE EXISTS (SELECT 1 FROM inserted)
            ), \(announcementsSQL(arrivalBefore: "(SELECT arrival FROM base)"))
            -- Everything above read this statement's snapshot, taken before the lock was granted: it stands
            -- only if no one held the lock in between. No count of the duplicates stored before (the
            -- transaction's statement has one, for imports): a phone is not told it, and its lookup of each
            -- conflict in every partition was set up for every upload, a sixth of the statement's time.
            SELECT CASE
                       WHEN (SELECT version FROM base) <> (SELECT version FROM seen) + 1
                           THEN upload_needs_transaction('the arrival lock was held after the snapshot')
                   END IS NULL,
                   (SELECT count(*) FROM inserted)
            """
        typealias Row = Int64
        var userID: UUID
        var types: [Int16]
        var times: [String]
        var values: [Double]

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(types)
            binds.append(times)
            binds.append(values)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            try row.decode((Bool, Int64).self).1
        }
    }

    /// Stores a batch on the caller's transaction (imports stream several batches into one); a sample whose
    /// (type, at) is already stored is a duplicate.
    /// `existingUpTo`: samples whose arrival number is at most this count as already there; later ones
    /// (stored by earlier batches of the same import) as repeated. Defaults to everything stored before.
    package static func ingest(
        _ samples: [Sample], for userID: UUID, existingUpTo: Int64? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> IngestResult {
        guard !samples.isEmpty else { return IngestResult(accepted: 0, duplicates: 0, alreadyThere: 0, arrivalBase: 0) }
        let base = try await lockArrivals(of: userID, on: connection, logger: logger)
        let row: IngestRow
        if samples.count <= boundArrayLimit {
            row = try await connection.preparedRow(
                IngestFromArrays(
                    userID: userID, base: base, existingUpTo: existingUpTo ?? base, types: samples.map(\.type.code),
                    times: samples.map { Timestamp.postgresText($0.at) }, values: samples.map(\.value)),
                logger: logger)
        } else {
            try await stage(samples, on: connection, logger: logger)
            row = try await connection.preparedRow(
                IngestFromStagedTable(userID: userID, base: base, existingUpTo: existingUpTo ?? base), logger: logger)
        }
        let (inserted, already) = row
        return IngestResult(
            accepted: Int(inserted), duplicates: samples.count - Int(inserted), alreadyThere: Int(already), arrivalBase: base)
    }

    /// The ingest statement around a batch's rows (`staged` selects ordinal, type, at, value), with `$1` the person,
    /// `$2` their last arrival number before the batch, `$3` the last that counts as "already there".
    private static func ingestSQL(staged: String) -> String {
        // One statement: the samples, the person's daily rollups, their arrival number, the batch's record
        // (subscription expiry is judged by when it arrived) and the events of the live subscribers this upload
        // releases something to. Every part reads the statement's snapshot, taken under the arrival row lock: rows
        // stored before this batch, told apart from this batch's (`inserted`) by their arrival number.
        return """
            WITH staged AS (
                \(staged)
            ), batch AS (
                SELECT DISTINCT ON (type, at) ordinal, type, at, value FROM staged ORDER BY type, at, ordinal
            ), inserted AS (
                INSERT INTO samples (user_id, type, at, value, arrival)
                SELECT $1, type, at, value, $2 + row_number() OVER (ORDER BY ordinal) FROM batch
                ON CONFLICT DO NOTHING
                RETURNING type, at, value
            ), zone AS (
                SELECT time_zone FROM users WHERE account_id = $1
            ), rolled_up AS (
                -- The person's local day (sample_day, migration 0007); their zone cannot change meanwhile:
                -- a change takes the arrival row lock this transaction holds.
                INSERT INTO daily_rollups AS r (user_id, type, day, count, sum, sum_squares, min, max)
                SELECT $1, type, sample_day(type, at, value, (SELECT time_zone FROM zone)),
                       count(*), sum(value), sum(value * value), min(value), max(value)
                FROM inserted GROUP BY type, 3
                ON CONFLICT (user_id, type, day) DO UPDATE SET
                    count = r.count + excluded.count, sum = r.sum + excluded.sum,
                    sum_squares = r.sum_squares + excluded.sum_squares,
                    min = least(r.min, excluded.min), max = greatest(r.max, excluded.max)
            ), advanced AS (
                UPDATE sample_arrivals SET last_arrival = $2 + (SELECT count(*) FROM batch) WHERE user_id = $1
            ), recorded AS (
                -- When this upload arrived (subscription expiry is judged by it), if it stored anything. Its
                -- last number is `$2` plus the batch's distinct samples, as `advanced` sets it: a sample
                -- repeated inside the batch takes no number. (Counting the repeats recorded a number the next
                -- upload would give again, and that upload failed on `sample_batches`' key.) Under the arrival
                -- row lock, so `clock_timestamp()` grows with the arrival numbers.
                INSERT INTO sample_batches (user_id, last_arrival, received_at)
                SELECT $1, $2 + (SELECT count(*) FROM batch), clock_timestamp() WHERE EXISTS (SELECT 1 FROM inserted)
            ), conflicted AS (
                SELECT b.type, b.at FROM batch b
                WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.type = b.type AND i.at = b.at)
            ), already AS (
                -- Only the rows that were not inserted, each probed by primary key in its month's partition
                -- (a join would read all of the person's samples, for every batch of an import).
                SELECT count(*) AS n FROM conflicted c
                CROSS JOIN LATERAL (
                    SELECT 1 FROM samples s
                    WHERE s.user_id = $1 AND s.type = c.type AND s.at = c.at AND s.arrival <= $3
                    LIMIT 1
                ) stored_before
            ), \(announcementsSQL(arrivalBefore: "$2"))
            SELECT (SELECT count(*) FROM inserted), (SELECT n FROM already)
            """
    }

    /// The CTEs, after `inserted`, that queue `subscription.data_available` for the person's live subscribers to
    /// whom this upload releases something (a sample of a requested type the person shares, inside the window:
    /// an upload of unshared types alone is announced to no one, as a download would release nothing of it).
    /// Each event carries the arrival its subscriber's last download of everything before this upload ended
    /// at: the last released sample's, never the person's raw arrival count (which would tell them how much
    /// else they uploaded). `arrivalBefore` is the SQL of the person's last arrival number before the batch.
    /// The cursor is sealed when the event is delivered (migration 0049), so no key is needed here, and the
    /// event is queued only for a company with a webhook, folded into a pending one as
    /// `enqueue_webhook_event` does (0003).
    static func announcementsSQL(arrivalBefore: String) -> String {
        """
        subscribers AS (
            -- A function (migration 0052), so that the scan of every partition is set up only when called.
            SELECT r.id, r.third_party_id,
                   subscriber_samples_arrival($1, \(arrivalBefore), r.types, r.window_from, r.window_to) AS arrival
            FROM single_requests r
            WHERE r.user_id = $1 AND r.status = 'accepted' AND r.subscription_days IS NOT NULL
              AND r.ended_at IS NULL AND r.ends_at > now()
              AND EXISTS (
                  SELECT 1 FROM inserted i
                  WHERE i.type = ANY(r.types) AND i.type <> ALL(ARRAY(SELECT u.type FROM unshared_types u WHERE u.user_id = $1))
                    AND (r.window_from IS NULL OR i.at >= r.window_from)
                    AND (r.window_to IS NULL OR i.at <= r.window_to))
        ), \(announcedSQL(.subscriptionDataAvailable))
        """
    }

    /// The CTE after `subscribers` (request, its sender, the arrival its cursor stands for) that queues `type`
    /// for each whose company has a webhook, folded into a pending one (the coalescing indexes, 0003 and 0016).
    static func announcedSQL(_ type: WebhookOutboxStore.EventType) -> String {
        """
        announced AS (
            INSERT INTO webhook_events (third_party_id, type, request_id, data, cursor_arrival)
            SELECT s.third_party_id, '\(type.rawValue)', s.id, jsonb_build_object('requestId', s.id::text), s.arrival
            FROM subscribers s
            WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.third_party_id = s.third_party_id)
            ON CONFLICT DO NOTHING
        )
        """
    }

    /// Fills the session's temporary table of staged samples by COPY (created on the connection's first use).
    private static func stage(_ samples: [Sample], on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            CREATE TEMP TABLE IF NOT EXISTS staged_samples (
                ordinal integer NOT NULL, type smallint NOT NULL, at timestamptz NOT NULL, value double precision NOT NULL
            ) ON COMMIT DELETE ROWS
            """, logger: logger)
        try await connection.query("TRUNCATE staged_samples", logger: logger)
        try await connection.copyLines(
            samples.enumerated(), into: "staged_samples", columns: ["ordinal", "type", "at", "value"], logger: logger
        ) { item, buffer in
            let (ordinal, sample) = item
            buffer.writeString("\(ordinal)\t\(sample.type.code)\t\(Timestamp.postgresText(sample.at))\t\(sample.value)\n")
        }
    }

    /// The person's last arrival number, with their arrival row locked until the transaction ends: the lock
    /// orders their concurrent uploads (of samples and of positions), so arrival order is commit order. One
    /// statement: the upsert makes the row on a first upload and locks it as `FOR UPDATE` would, returning
    /// the value current when the lock was granted. Everything that takes this lock takes it here.
    static func lockArrivals(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        try await connection.preparedRow(ArrivalLock(userID: userID), logger: logger)
    }

    /// `lockArrivals`' upsert, prepared once per connection: every upload runs it.
    struct ArrivalLock: PostgresPreparedStatement {
        static let name = "d4h_arrival_lock"
        // `version` counts the lock's holders, so that an upload's single statement knows whether anyone held it
        // after its snapshot (`IngestAlone`).
        static let sql = """
            INSERT INTO sample_arrivals AS a (user_id) VALUES ($1)
            ON CONFLICT (user_id) DO UPDATE SET version = a.version + 1
            RETURNING last_arrival
            """
        typealias Row = Int64
        var userID: UUID

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }

    /// A page of the person's samples in time order (then type), optionally of one type and within [from, to].
    static func list(
        userID: UUID, type: SampleType?, from: Date?, to: Date?, after cursor: SampleCursor?, limit: Int, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> (samples: [Sample], next: SampleCursor?) {
        // Times go to PostgreSQL as exact microsecond text: binding a Date truncates, which would move an
        // inclusive bound or a cursor by a microsecond.
        let from = from.map(Timestamp.postgresText)
        let to = to.map(Timestamp.postgresText)
        let after = cursor.map { Timestamp.postgresText($0.at) }
        let rows = try await connection.query(
            """
            SELECT type, at, value FROM samples
            WHERE user_id = \(userID)
              AND (\(type?.code)::int2 IS NULL OR type = \(type?.code))
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
              AND (\(after)::timestamptz IS NULL OR (at, type) > (\(after)::timestamptz, \(cursor?.type.code)))
            ORDER BY at, type
            LIMIT \(limit + 1)
            """, logger: logger)
        var samples: [Sample] = []
        for try await (code, at, value) in rows.decode((Int16, Date, Double).self) {
            guard let type = SampleType(code: code) else { continue }
            samples.append(Sample(type: type, value: value, at: at))
        }
        guard samples.count > limit else { return (samples, nil) }
        samples.removeLast()
        return (samples, samples.last.map { SampleCursor(at: $0.at, type: $0.type) })
    }
}

extension SampleStore {
    /// Creates the partition of samples for the month of `month` unless it exists, moving that month's rows out of
    /// the default partition; returns whether it created it. One statement, so one short transaction a month.
    static func ensurePartition(month: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query("SELECT ensure_month_partition('samples', \(month.description)::date)", logger: logger)
            .collect().first?.decode(Bool.self) ?? false
    }

    /// The next `limit` of a person's samples in time order (then type) after `cursor`, for the export.
    ///
    /// Each type is read along the primary key (user, type, time) from the cursor on, at most `limit` rows
    /// of it, and only those are merged and sorted: a page costs the same for a person with a thousand
    /// samples as for one with ten million, so the export reads page by page on short leases instead of
    /// one statement held open while the client reads.
    static func exportPage(userID: UUID, after cursor: SampleCursor?, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> [Sample]
    {
        let after = cursor.map { Timestamp.postgresText($0.at) }
        let rows = try await connection.query(
            """
            SELECT s.type, s.at, s.value
            FROM unnest(\(SampleType.allCases.map(\.code))::int2[]) AS t(type)
            CROSS JOIN LATERAL (
                SELECT type, at, value FROM samples
                WHERE user_id = \(userID) AND type = t.type
                  AND (\(after)::timestamptz IS NULL
                       OR at > \(after)::timestamptz OR (at = \(after)::timestamptz AND type > \(cursor?.type.code)))
                ORDER BY at
                LIMIT \(limit)
            ) s
            ORDER BY s.at, s.type
            LIMIT \(limit)
            """, logger: logger)
        var samples: [Sample] = []
        for try await (code, at, value) in rows.decode((Int16, Date, Double).self) {
            guard let type = SampleType(code: code) else { continue }
            samples.append(Sample(type: type, value: value, at: at))
        }
        return samples
    }
}
