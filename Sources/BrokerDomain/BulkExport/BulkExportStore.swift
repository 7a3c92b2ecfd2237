import Foundation
import Logging
import PostgresNIO

/// The SQL of bulk exports (`0033_bulk_exports.sql`).
enum BulkExportStore {
    /// Inserts the export and one unplanned file per accepted single request the company sent (with a person:
    /// an erased person's request releases nothing), in one statement, so the count and the files agree.
    /// An export with no request is complete at once. `since` that equals the `transactionTime` of an earlier
    /// complete export of the same company links the two (each file then starts at that export's bound).
    /// Throws the unique violation of `onePlanningPerCompany` when the company already has an export planning
    /// (the caller's transaction is then aborted, so the caller catches it outside).
    static func insert(
        id: UUID, company: UUID, types: String, since: Date?, requestURL: String, createdAt: Date, expiresAt: Date,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let since = since.map(Timestamp.postgresText)
        let created = Timestamp.postgresText(createdAt)
        let expires = Timestamp.postgresText(expiresAt)
        try await connection.query(
            """
            WITH granted AS (
                SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM single_requests
                WHERE third_party_id = \(company) AND status = 'accepted' AND user_id IS NOT NULL
            ), export AS (
                INSERT INTO bulk_exports (
                    id, third_party_id, status, transaction_time, types, since, since_export, request_url, created_at, expires_at, total)
                SELECT \(id), \(company), CASE WHEN count(*) = 0 THEN 'complete' ELSE 'planning' END,
                    date_trunc('milliseconds', now()), \(types), \(since)::timestamptz,
                    (SELECT e.id FROM bulk_exports e
                     WHERE e.third_party_id = \(company) AND e.status = 'complete' AND e.transaction_time = \(since)::timestamptz
                     ORDER BY e.created_at LIMIT 1),
                    \(requestURL), \(created)::timestamptz, \(expires)::timestamptz, count(*)
                FROM granted
            )
            INSERT INTO bulk_export_files (export_id, n, request_id) SELECT \(id), n, id FROM granted
            """, logger: logger)
    }

    /// The constraint `insert` violates when the company already has an export planning.
    static let onePlanningPerCompany = "bulk_exports_one_planning_per_company"

    /// The export if it is the company's and has not expired at `now`, with its planned non-empty files.
    static func export(id: UUID, company: UUID, now: Date, on connection: PostgresConnection, logger: Logger) async throws -> BulkExport? {
        let rows = try await connection.query(
            """
            SELECT status, transaction_time, request_url, created_at, expires_at, planned, total FROM bulk_exports
            WHERE id = \(id) AND third_party_id = \(company) AND expires_at > \(Timestamp.postgresText(now))::timestamptz
            """, logger: logger)
        guard let row = try await rows.collect().first else { return nil }
        let (status, transactionTime, url, created, expires, planned, total) = try row.decode((String, Date, String, Date, Date, Int, Int).self)
        var export = BulkExport(
            id: id, status: BulkExport.Status(rawValue: status) ?? .planning, transactionTime: transactionTime, requestURL: url,
            createdAt: created, expiresAt: expires, planned: planned, total: total, files: [])
        guard export.status == .complete else { return export }
        let files = try await connection.query(
            "SELECT n, request_id, count FROM bulk_export_files WHERE export_id = \(id) AND count > 0 ORDER BY n", logger: logger)
        for try await (n, requestID, count) in files.decode((Int, UUID, Int64).self) {
            export.files.append(BulkExport.File(n: n, requestID: requestID, count: count))
        }
        return export
    }

    /// Deletes the company's export and its files; false when it has none with this id. The files go
    /// first, in the caller's transaction: the planner locks a file, then its export, and a cascade from the
    /// export would take them the other way round (a deadlock PostgreSQL breaks by failing one of the two).
    static func delete(id: UUID, company: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query(
            """
            DELETE FROM bulk_export_files
            WHERE export_id = (SELECT e.id FROM bulk_exports e WHERE e.id = \(id) AND e.third_party_id = \(company))
            """, logger: logger)
        let rows = try await connection.query(
            "DELETE FROM bulk_exports WHERE id = \(id) AND third_party_id = \(company) RETURNING id", logger: logger)
        return try await rows.collect().count > 0
    }

    /// A planned file of the company's complete, unexpired export: its request and arrival range.
    static func file(export id: UUID, n: Int, company: UUID, now: Date, on connection: PostgresConnection, logger: Logger) async throws
        -> (requestID: UUID, cursor: Int64, bound: Int64)?
    {
        let rows = try await connection.query(
            """
            SELECT f.request_id, f.cursor, f.bound FROM bulk_export_files f JOIN bulk_exports e ON e.id = f.export_id
            WHERE f.export_id = \(id) AND f.n = \(n) AND f.bound IS NOT NULL
              AND e.third_party_id = \(company) AND e.status = 'complete' AND e.expires_at > \(Timestamp.postgresText(now))::timestamptz
            """, logger: logger)
        guard let row = try await rows.collect().first else { return nil }
        let (requestID, cursor, bound) = try row.decode((UUID, Int64, Int64).self)
        return (requestID, cursor, bound)
    }

    /// The next unplanned file of an export still planning, locked for this transaction; files another
    /// instance is planning are passed over. Oldest export first.
    static func claimUnplannedFile(on connection: PostgresConnection, logger: Logger) async throws -> UnplannedFile? {
        let rows = try await connection.query(
            """
            SELECT f.export_id, f.n, f.request_id, e.third_party_id, e.transaction_time, e.since, e.since_export
            FROM bulk_export_files f JOIN bulk_exports e ON e.id = f.export_id
            WHERE f.bound IS NULL AND e.status = 'planning'
            ORDER BY e.created_at, f.export_id, f.n
            LIMIT 1
            FOR UPDATE OF f SKIP LOCKED
            """, logger: logger)
        guard let row = try await rows.collect().first else { return nil }
        let (exportID, n, requestID, company, transactionTime, since, sinceExport) = try row.decode(
            (UUID, Int, UUID, UUID, Date, Date?, UUID?).self)
        return UnplannedFile(
            exportID: exportID, n: n, requestID: requestID, company: company, transactionTime: transactionTime, since: since,
            sinceExport: sinceExport)
    }

    /// The last arrival number among the person's uploads received at or before `time` (0 if none): what
    /// an export whose transaction time (or `_since`) is `time` counts as uploaded by then.
    static func lastArrival(of userID: UUID, receivedBy time: Date, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.query(
            """
            SELECT coalesce(max(last_arrival), 0) FROM sample_batches
            WHERE user_id = \(userID) AND received_at <= \(Timestamp.postgresText(time))::timestamptz
            """, logger: logger)
        return try await rows.collect().first?.decode(Int64.self) ?? 0
    }

    /// Where the earlier export's file of the same request ended (nil when that export had no such file).
    static func earlierBound(export id: UUID, requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        let rows = try await connection.query(
            "SELECT bound FROM bulk_export_files WHERE export_id = \(id) AND request_id = \(requestID) AND bound IS NOT NULL", logger: logger)
        return try await rows.collect().first?.decode(Int64.self)
    }

    /// How many samples the request releases with arrival in (cursor, bound]: the same filter as
    /// `SingleRequestStore.releasedChunk` (requested types less the unshared ones, inside the window).
    static func releasedCount(
        userID: UUID, request: SingleRequest, cursor: Int64, bound: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64 {
        let from = request.windowFrom.map(Timestamp.postgresText)
        let to = request.windowTo.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            SELECT count(*) FROM samples
            WHERE user_id = \(userID) AND arrival > \(cursor) AND arrival <= \(bound)
              AND type = ANY(ARRAY(
                  SELECT t FROM unnest(\(request.types.sampleTypes.map(\.code))::int2[]) AS t
                  WHERE NOT EXISTS (SELECT 1 FROM unshared_types u WHERE u.user_id = \(userID) AND u.type = t)))
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
            """, logger: logger)
        return try await rows.collect().first?.decode(Int64.self) ?? 0
    }

    /// Records a file's range and count, and counts it as planned; the export is complete with its last file.
    static func recordPlan(
        _ file: UnplannedFile, cursor: Int64, bound: Int64, count: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE bulk_export_files SET cursor = \(cursor), bound = \(bound), count = \(count)
            WHERE export_id = \(file.exportID) AND n = \(file.n)
            """, logger: logger)
        try await connection.query(
            """
            UPDATE bulk_exports SET planned = planned + 1, status = CASE WHEN planned + 1 = total THEN 'complete' ELSE 'planning' END
            WHERE id = \(file.exportID)
            """, logger: logger)
    }

    /// Removes the exports that expired at `now` (their files go with them); returns how many.
    static func deleteExpired(now: Date, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        // Files first, as in `delete`, in the caller's transaction.
        try await connection.query(
            """
            DELETE FROM bulk_export_files
            WHERE export_id IN (SELECT e.id FROM bulk_exports e WHERE e.expires_at <= \(Timestamp.postgresText(now))::timestamptz)
            """, logger: logger)
        let rows = try await connection.query(
            "DELETE FROM bulk_exports WHERE expires_at <= \(Timestamp.postgresText(now))::timestamptz RETURNING id", logger: logger)
        return try await rows.collect().count
    }
}

/// A file the planner claimed, with what its range depends on.
struct UnplannedFile: Sendable {
    var exportID: UUID
    var n: Int
    var requestID: UUID
    var company: UUID
    var transactionTime: Date
    var since: Date?
    var sinceExport: UUID?
}
