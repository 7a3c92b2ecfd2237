import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Plans bulk exports in the background: one file (one single request) per transaction, claimed with
/// `FOR UPDATE SKIP LOCKED`, so any number of instances share the work and none plans a file twice. Also
/// removes the exports that expired (by the injected clock).
///
/// A file's range is fixed as its request's download would fix it, at the export's transaction time:
/// - the bound is the last sample the request releases (`SingleRequestStore.releaseBound`, then
///   `lastReleasedArrival`: granted types the person still shares, inside the window), among the samples
///   whose upload was received at or before the transaction time;
/// - the cursor is 0, or with `_since` the bound of the same request's file in the earlier export whose
///   transaction time `_since` names, or else the last arrival uploaded at or before `_since`.
package struct BulkExportPlanner: Service {
    package init(client: DatabasePool, interval: Duration?, clock: WallClock, logger: Logger) {
        self.client = client
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    let client: DatabasePool
    /// How often it looks for work; nil turns the loop off (tests then plan by calling `planNextFile`).
    let interval: Duration?
    let clock: WallClock
    let logger: Logger

    package func run() async throws {
        // Off: wait for shutdown all the same, since a service that returns ends the whole server.
        guard let interval else { return try await gracefulShutdown() }
        let planner = self
        await repeatUntilShutdown(every: interval, logger: logger, failure: "planning bulk exports failed; will retry") {
            _ = try await planner.removeExpired()
            return try await planner.planNextFile()
        }
    }

    /// Plans one file, if any is waiting; true when one was planned (there may be more).
    @discardableResult
    package func planNextFile() async throws -> Bool {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            guard let file = try await BulkExportStore.claimUnplannedFile(on: connection, logger: logger) else { return false }
            let (cursor, bound, count) = try await Self.range(of: file, on: connection, logger: logger)
            try await BulkExportStore.recordPlan(file, cursor: cursor, bound: bound, count: count, on: connection, logger: logger)
            return true
        }
    }

    /// Plans every waiting file (tests; the loop plans one per transaction).
    package func planAll() async throws {
        while try await planNextFile() {}
    }

    /// Deletes the exports that expired by the clock; returns how many.
    @discardableResult
    package func removeExpired() async throws -> Int {
        let now = clock.now
        let logger = logger
        return try await client.withTransaction(logger: logger) { try await BulkExportStore.deleteExpired(now: now, on: $0, logger: logger) }
    }

    static func range(of file: UnplannedFile, on connection: PostgresConnection, logger: Logger) async throws
        -> (cursor: Int64, bound: Int64, count: Int64)
    {
        // The request as its sender's download reads it now: refused, cancelled or another company's never
        // release anything (the kick-off took only accepted ones, but the person may have been erased since).
        guard
            let (request, arrived) = try await SingleRequestStore.releaseBound(
                requestID: file.requestID, sender: file.company, on: connection, logger: logger),
            request.status == .accepted, let userID = request.userID
        else { return (0, 0, 0) }
        let uploaded = try await BulkExportStore.lastArrival(of: userID, receivedBy: file.transactionTime, on: connection, logger: logger)
        let bound = try await SingleRequestStore.lastReleasedArrival(
            userID: userID, types: request.types.sampleTypes, from: request.windowFrom, to: request.windowTo, upTo: min(arrived, uploaded),
            on: connection, logger: logger)
        var cursor: Int64 = 0
        if let earlier = file.sinceExport {
            // A request the earlier export did not hold starts at 0: the company never had its samples.
            cursor = try await BulkExportStore.earlierBound(export: earlier, requestID: file.requestID, on: connection, logger: logger) ?? 0
        } else if let since = file.since {
            cursor = try await BulkExportStore.lastArrival(of: userID, receivedBy: since, on: connection, logger: logger)
        }
        guard cursor < bound else { return (cursor, max(cursor, bound), 0) }
        let count = try await BulkExportStore.releasedCount(
            userID: userID, request: request, cursor: cursor, bound: bound, on: connection, logger: logger)
        return (cursor, bound, count)
    }
}
