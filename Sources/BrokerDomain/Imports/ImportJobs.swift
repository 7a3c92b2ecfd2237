import Foundation
import Logging
import ServiceLifecycle

/// Runs Apple Health imports: a file up to `backgroundBytes` in the request, as before; a larger one as a job
/// that outlives the request (202 and a status URL), so that a person sees it progress instead of a request
/// that hangs for minutes. Both are the same all-or-nothing import (`AppleHealthImport`).
///
/// A job's row is created in a short transaction before the import's; its success is recorded inside the
/// import's transaction, its failure in a short one after that rolled back: no code here waits for a pooled
/// connection while holding one. As a service it fails, at start, the jobs an earlier process left running,
/// and at shutdown cancels the running ones (rolled back, recorded failed) so that a stop never waits on them.
package final class ImportJobs: Service, Sendable {
    package static let restartedDetail = "The server restarted during the import; nothing was stored — import the file again."
    static let stoppedDetail = "The server stopped during the import; nothing was stored — import the file again."

    let importer: AppleHealthImport
    let client: DatabasePool
    let registry: ImportJobRegistry
    /// `IMPORT_BACKGROUND_BYTES`: uploads larger than this run as jobs.
    package let backgroundBytes: Int64
    let logger: Logger
    /// What a failed job records: the problem document the request would have answered had it run in the
    /// request. The API knows how errors become problems; it hands this in (`Services`).
    let failureOf: @Sendable (any Error, Logger) -> ImportJob.Failure
    /// When a job ended, as its status shows while this instance runs.
    let clock: WallClock

    /// How an import submitted by a request went on.
    package enum Submission: Sendable {
        /// Small enough to run in the request: its result.
        case finished(AppleHealthImport.Result)
        /// Started in the background: the job as it is now.
        case started(ImportJob)
    }

    package init(
        importer: AppleHealthImport, backgroundBytes: Int64, maximumBackground: Int, logger: Logger,
        failureOf: @escaping @Sendable (any Error, Logger) -> ImportJob.Failure, clock: WallClock = .system
    ) {
        self.clock = clock
        self.importer = importer
        self.failureOf = failureOf
        client = importer.client
        registry = ImportJobRegistry(maximumBackground: maximumBackground)
        self.backgroundBytes = backgroundBytes
        self.logger = logger
    }

    /// Before a body is read: only people import (403), and a person with an import under way here gets the
    /// 409 at once, not after uploading.
    package func refuseIfImporting(_ principal: Principal) async throws {
        guard principal.role == .user else { throw SampleError.notAUser }
        if await registry.isImporting(principal.accountID) { throw ImportJobError.alreadyRunning }
    }

    /// Imports `upload`, which this takes over (it is removed when the import ends, whichever way).
    package func submit(
        _ upload: TemporaryUpload, format: AppleHealthExportReader.Format?, userID: UUID, logger: Logger
    ) async throws -> Submission {
        guard upload.size > backgroundBytes else {
            defer { upload.remove() }
            try await registry.reserve(userID)
            do {
                let result = try await importer.run(file: upload.url, format: format, userID: userID, logger: logger)
                await registry.release(userID)
                return .finished(result)
            } catch {
                await registry.release(userID)
                throw error
            }
        }
        var job = ImportJob(id: UUID(), userID: userID, bytesTotal: upload.size, createdAt: clock.now)
        do {
            try await registry.reserve(background: job)
        } catch {
            upload.remove()
            throw error
        }
        do {
            job.createdAt = try await createRow(of: job, logger: logger)
        } catch {
            await registry.release(userID, job: job.id)
            upload.remove()
            throw error
        }
        // Detached: the job outlives the request and must not inherit its task-locals (caller, lease records).
        let started = job
        let task = Task.detached { [self] in await execute(started, upload: upload, format: format) }
        await registry.attach(task, to: job.id)
        return .started(job)
    }

    /// Inserts a running job in a short transaction of its own, before the import's. A person's running job
    /// left by an instance that died (no transaction holds its row) is failed first, so it cannot block them.
    private func createRow(of job: ImportJob, logger: Logger) async throws -> Date {
        let oneRunningPerPerson = "import_jobs_one_running_per_person"
        func insert() async throws -> Date {
            try await client.withTransaction(logger: logger) {
                try await ImportJobStore.insert(id: job.id, userID: job.userID, bytesTotal: job.bytesTotal, on: $0, logger: logger)
            }
        }
        do {
            return try await insert()
        } catch let error where PostgresErrors.uniqueViolation(in: error) == oneRunningPerPerson {
            let failed = try await client.withConnection {
                try await ImportJobStore.failAbandoned(userID: job.userID, detail: Self.restartedDetail, on: $0, logger: logger)
            }
            guard failed > 0 else { throw ImportJobError.alreadyRunning }
            do {
                return try await insert()
            } catch let error where PostgresErrors.uniqueViolation(in: error) == oneRunningPerPerson {
                throw ImportJobError.alreadyRunning
            }
        }
    }

    /// The caller's job: live from this instance's memory, or as the database last recorded it.
    package func job(id: UUID, for principal: Principal, logger: Logger) async throws -> ImportJob {
        guard principal.role == .user else { throw SampleError.notAUser }
        let userID = principal.accountID
        if let live = await registry.job(id) {
            guard live.userID == userID else { throw ImportJobError.notFound }
            return live
        }
        let stored = try await client.withConnection { try await ImportJobStore.job(id: id, userID: userID, on: $0, logger: logger) }
        guard let stored else { throw ImportJobError.notFound }
        return stored
    }

    private func execute(_ started: ImportJob, upload: TemporaryUpload, format: AppleHealthExportReader.Format?) async {
        defer { upload.remove() }
        var job = started
        let id = job.id
        let registry = registry
        let logger = logger.with(importJob: id)
        do {
            let result = try await importer.run(
                file: upload.url, format: format, userID: job.userID, logger: logger,
                progress: { await registry.update(id, $0) },
                hooks: .init(
                    begin: { try await ImportJobStore.lock(id: id, on: $0, logger: logger) },
                    finish: { result, progress, connection in
                        try await ImportJobStore.recordSuccess(id: id, result: result, progress: progress, on: connection, logger: logger)
                    }))
            job = await registry.job(id) ?? job
            job.status = .succeeded
            job.bytesRead = job.bytesTotal
            job.result = result
            job.stored = result.stored
        } catch {
            job = await registry.job(id) ?? job
            job.status = .failed
            job.stored = 0
            job.failure =
                error is CancellationError || Task.isCancelled
                ? ImportJob.Failure.interrupted(detail: Self.stoppedDetail)
                : failureOf(error, logger)
            let failed = job
            // In a task of its own: this one may be cancelled (a shutdown), which would abandon the write at once.
            let recorded = await Task { [client] in
                do {
                    try await client.withConnection { connection in
                        try await ImportJobStore.recordFailure(
                            id: id, failure: failed.failure!,
                            progress: .init(bytesTotal: failed.bytesTotal, bytesRead: failed.bytesRead, recordsRead: failed.recordsRead, stored: 0),
                            on: connection, logger: logger)
                    }
                    return true
                } catch {
                    logger.error("could not record a failed import", metadata: ["error": "\(String(reflecting: error))"])
                    return false
                }
            }.value
            if !recorded { logger.warning("the import job stays running in the database until an instance restarts") }
        }
        job.finishedAt = clock.now
        await registry.end(job)
    }

    /// Fails what an earlier process left running, then waits for the shutdown and cancels what runs then.
    package func run() async throws {
        // Cancelled by a shutdown: with the database unreachable the lease would otherwise hold the stop for
        // the whole pool timeout (60 s in the tests, whose servers then took a minute to stop).
        await cancelWhenGracefulShutdown { [client, logger] in
            do {
                let failed = try await client.withConnection {
                    try await ImportJobStore.failAbandoned(detail: Self.restartedDetail, on: $0, logger: logger)
                }
                if failed > 0 { logger.notice("marked imports interrupted by a restart as failed", metadata: ["count": "\(failed)"]) }
            } catch {
                // Stopped before it could run (a shutdown soon after the start): the next start does it.
                if Task.isCancelled { return }
                // The jobs stay running until the next start; people with one get a 409 until then.
                logger.error("could not fail abandoned imports", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
        try? await gracefulShutdown()
        for task in await registry.stop() { await task.value }
    }
}

extension Logger {
    func with(importJob id: UUID) -> Logger {
        var logger = self
        logger[metadataKey: "import.job"] = "\(id.uuidString.lowercased())"
        return logger
    }
}
