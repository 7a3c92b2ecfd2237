import Foundation
import Logging
import PostgresNIO

/// The SQL of import jobs: their rows outlive the instance that runs them (see `0008_import_jobs.sql`).
enum ImportJobStore {
    /// A running job's row; a second running job of the same person violates
    /// `import_jobs_one_running_per_person`.
    static func insert(id: UUID, userID: UUID, bytesTotal: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Date {
        let rows = try await connection.query(
            """
            INSERT INTO import_jobs (id, user_id, bytes_total) VALUES (\(id), \(userID), \(bytesTotal))
            RETURNING created_at
            """, logger: logger)
        // The database stamps the row; `INSERT … RETURNING` always returns it, so the system time is never read.
        return try await rows.collect().first?.decode(Date.self) ?? Date()
    }

    /// First in the import's transaction: holds the row's lock until it commits or rolls back, which is how
    /// a starting instance tells a live job (locked) from an abandoned one.
    static func lock(id: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        let status = try await connection.query(
            "SELECT status FROM import_jobs WHERE id = \(id) FOR UPDATE", logger: logger
        ).collect().first?.decode(String.self)
        guard status == ImportJob.Status.running.rawValue else { throw ImportJobError.abandoned }
    }

    /// Last in the import's transaction: the outcome commits with the data, or neither does.
    static func recordSuccess(
        id: UUID, result: AppleHealthImport.Result, progress: AppleHealthImport.Progress, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let json = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
        try await connection.query(
            """
            UPDATE import_jobs SET status = 'succeeded', finished_at = now(), result = \(json)::jsonb,
                bytes_read = \(progress.bytesRead), records_read = \(progress.recordsRead), stored = \(progress.stored)
            WHERE id = \(id)
            """, logger: logger)
    }

    /// After the import's transaction rolled back, in one of its own. A job already ended (failed by a
    /// starting instance) keeps its first outcome.
    static func recordFailure(
        id: UUID, failure: ImportJob.Failure, progress: AppleHealthImport.Progress, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let json = String(decoding: try JSONEncoder().encode(failure), as: UTF8.self)
        try await connection.query(
            """
            UPDATE import_jobs SET status = 'failed', finished_at = now(), problem = \(json)::jsonb,
                bytes_read = \(progress.bytesRead), records_read = \(progress.recordsRead), stored = 0
            WHERE id = \(id) AND status = 'running'
            """, logger: logger)
    }

    /// Fails the running jobs no transaction holds (their import ended with the process that ran it),
    /// of one person or of everyone; returns how many. A live import holds its row's lock: SKIP LOCKED
    /// passes over it.
    static func failAbandoned(userID: UUID? = nil, detail: String, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let failure = ImportJob.Failure.interrupted(detail: detail)
        let json = String(decoding: try JSONEncoder().encode(failure), as: UTF8.self)
        let rows = try await connection.query(
            """
            WITH abandoned AS (
                SELECT id FROM import_jobs
                WHERE status = 'running' AND (\(userID)::uuid IS NULL OR user_id = \(userID))
                FOR UPDATE SKIP LOCKED
            )
            UPDATE import_jobs j SET status = 'failed', finished_at = now(), problem = \(json)::jsonb, stored = 0
            FROM abandoned a WHERE j.id = a.id
            RETURNING j.id
            """, logger: logger)
        return try await rows.collect().count
    }

    /// The job, if it is this person's.
    static func job(id: UUID, userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> ImportJob? {
        let rows = try await connection.query(
            """
            SELECT status, bytes_total, bytes_read, records_read, stored, created_at, finished_at, result::text, problem::text
            FROM import_jobs WHERE id = \(id) AND user_id = \(userID)
            """, logger: logger)
        guard let row = try await rows.collect().first else { return nil }
        let (status, total, read, records, stored, created, finished, result, problem) = try row.decode(
            (String, Int64, Int64, Int64, Int64, Date, Date?, String?, String?).self)
        let decoder = JSONDecoder()
        return ImportJob(
            id: id, userID: userID, status: ImportJob.Status(rawValue: status) ?? .failed, bytesTotal: total, bytesRead: read,
            recordsRead: Int(records), stored: Int(stored), createdAt: created, finishedAt: finished,
            result: try result.map { try decoder.decode(AppleHealthImport.Result.self, from: Data($0.utf8)) },
            failure: try problem.map { try decoder.decode(ImportJob.Failure.self, from: Data($0.utf8)) })
    }
}
