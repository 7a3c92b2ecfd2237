import Foundation
import Logging
import PostgresNIO

/// The run's day, driven by `RunDay`: requests go out (R38–R41), absentees are removed at the start (R48),
/// finishes are detected from positions, and requests end with the run.
extension RunService {
    /// Sends the run's request to every runner of a run starting within a day who has none yet, each in a
    /// transaction of its own (one runner's failure does not hold back the others). Returns how many.
    @discardableResult
    func sendDueRequests(only joiner: (run: UUID, user: UUID)? = nil, limit: Int = 200, logger: Logger) async throws -> Int {
        let due = try await client.withConnection {
            try await RunStore.runnersAwaitingRequests(lead: RunRules.requestLead, only: joiner, limit: limit, on: $0, logger: logger)
        }
        var sent = 0
        for runner in due {
            do {
                let wasSent = try await client.withTransaction(logger: logger) { connection -> Bool in
                    // Read again under the run's lock: it may have been cancelled, moved or left meanwhile.
                    guard let run = try await RunStore.run(id: runner.run, locked: true, on: connection, logger: logger),
                        run.state(at: clock.now) == .upcoming,
                        let participant = try await RunStore.participant(run: runner.run, user: runner.user, on: connection, logger: logger),
                        participant.requestID == nil
                    else { return false }
                    let request = try await singleRequests.sendForRun(
                        organiserID: run.organiserID, userID: runner.user, runName: run.name, from: run.startsAt, to: run.endsAt,
                        on: connection, logger: logger)
                    try await RunStore.setRequest(request.id, run: runner.run, user: runner.user, on: connection, logger: logger)
                    return true
                }
                // Only what was sent counts: a pass that sent nothing must let the day's job rest.
                if wasSent { sent += 1 }
            } catch {
                // One runner's failure does not hold back the others; they are tried again on the next pass.
                logger.warning(
                    "a run's request could not be sent", metadata: ["run.id": "\(runner.run)", "error": "\(String(reflecting: error))"])
            }
        }
        return sent
    }

    /// Removes the runners of started runs who had not checked in, withdrawing their requests (R48).
    @discardableResult
    func removeAbsentees(logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let removed = try await RunStore.removeAbsentees(on: connection, logger: logger)
            for absentee in removed {
                try await Self.announce(
                    .runRunnerRemoved, run: absentee.run, to: absentee.organiser, data: ["bib": String(absentee.bib)], on: connection, logger: logger)
                guard let requestID = absentee.request else { continue }
                try await singleRequests.withdrawForRun(
                    requestID: requestID, organiserID: absentee.organiser, reason: "not checked in by the start", on: connection, logger: logger)
            }
            return removed.count
        }
    }

    /// Ends the requests of runs that finished or were cancelled ("a subscription that ends with the run").
    @discardableResult
    func endRequestsWithTheirRuns(limit: Int = 200, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let outliving = try await RunStore.requestsOutlivingTheirRun(limit: limit, on: connection, logger: logger)
            for request in outliving {
                try await singleRequests.withdrawForRun(
                    requestID: request.request, organiserID: request.organiser, reason: "run over", on: connection, logger: logger)
            }
            return outliving.count
        }
    }

    /// Looks at the positions runners uploaded since the last pass: a runner passes the path's middle, then
    /// reaches its finish (both within `RunRules.checkpointMetres`), at the time of the fix that did it.
    @discardableResult
    func trackProgress(limit: Int = 2000, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            // Each run's path and middle once per pass, not once per runner (the middle walks the whole path).
            var paths: [UUID: (path: RunPath, middle: GeoPoint)] = [:]
            var finished = 0
            for runner in try await RunStore.newProgress(limit: limit, on: connection, logger: logger) {
                if paths[runner.run] == nil, let path = try await RunStore.run(id: runner.run, on: connection, logger: logger)?.path {
                    paths[runner.run] = (path, path.middle)
                }
                guard let (path, middle) = paths[runner.run] else { continue }
                let (halfway, finish) = RunProgress.advance(halfwayAt: runner.halfwayAt, fixes: runner.fixes, path: path, middle: middle)
                if let done = try await RunStore.recordProgress(
                    run: runner.run, user: runner.user, seenArrival: runner.lastArrival, halfwayAt: halfway, finishedAt: finish, on: connection,
                    logger: logger), let finish
                {
                    finished += 1
                    try await Self.announce(
                        .runRunnerFinished, run: runner.run, to: done.organiser,
                        data: ["bib": String(done.bib), "seconds": String(format: "%.1f", finish.timeIntervalSince(done.startsAt))],
                        on: connection, logger: logger)
                }
            }
            return finished
        }
    }
}

extension RunService {
    /// An event for the organiser's webhook about one of their runs (runners by bib only).
    static func announce(
        _ type: WebhookOutboxStore.EventType, run runID: UUID, to organiser: UUID, data: [String: String], on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        var payload = data
        payload["runId"] = runID.uuidString.lowercased()
        try await WebhookOutboxStore.enqueue(type, to: organiser, requestID: runID, data: payload, on: connection, logger: logger)
    }
}

/// Where a runner stands on the path, from their fixes in time order.
enum RunProgress {
    /// The time they passed the middle (kept if known) and the time they reached the finish after it.
    static func advance(halfwayAt: Date?, fixes: [(at: Date, point: GeoPoint)], path: RunPath, middle: GeoPoint) -> (halfway: Date?, finish: Date?) {
        var halfway = halfwayAt
        for fix in fixes {
            if halfway == nil, fix.point.distance(to: middle) <= RunRules.checkpointMetres { halfway = fix.at }
            // Strictly later: on a short path one fix may lie near both, and is not a whole run.
            if let passed = halfway, fix.at > passed, fix.point.distance(to: path.finish) <= RunRules.checkpointMetres {
                return (halfway, fix.at)
            }
        }
        return (halfway, nil)
    }
}
