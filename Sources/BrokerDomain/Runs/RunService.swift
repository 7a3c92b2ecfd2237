import Foundation
import Logging
import PostgresNIO

/// The rules of runs: organisers (third parties) create, edit and cancel them (R36/R37); anyone lists and
/// reads them (R42); people join and leave (R43–R45), check in (R46/R47) and set a privacy zone. The run's
/// day (requests, removal at the start, finish detection) is `RunService+Schedule`.
package struct RunService: Sendable {
    let client: DatabasePool
    let singleRequests: SingleRequestService
    let outbox: MailOutbox
    /// Whether a run is upcoming, live or over, and how soon one may start.
    package let clock: WallClock

    package init(client: DatabasePool, singleRequests: SingleRequestService, outbox: MailOutbox, clock: WallClock = .system) {
        self.clock = clock
        self.client = client
        self.singleRequests = singleRequests
        self.outbox = outbox
    }

    /// A run as the organiser types it, in domain terms; every field optional for an edit. A value the edge
    /// could not read is `unreadable`, with the edge's reason: it is reported with every other problem.
    package struct Draft: Sendable {
        /// The path's file and its format, always together.
        package struct Path: Sendable {
            package var format: Parsed<RunPath.Format>
            package var text: String
            package init(format: Parsed<RunPath.Format>, text: String) { (self.format, self.text) = (format, text) }
        }
        package var name: String?
        package var startsAt: Parsed<Date>?
        package var durationMinutes: Int?
        package var maxParticipants: Int?
        package var path: Path?

        package init(
            name: String? = nil, startsAt: Parsed<Date>? = nil, durationMinutes: Int? = nil, maxParticipants: Int? = nil, path: Path? = nil
        ) {
            (self.name, self.startsAt, self.durationMinutes, self.maxParticipants) = (name, startsAt, durationMinutes, maxParticipants)
            self.path = path
        }
    }

    static let durations = 10...1440
    static let places = 1...10_000
    static let nameLength = 1...120

    // MARK: Organisers

    package func create(_ draft: Draft, by principal: Principal, logger: Logger) async throws -> Run {
        guard principal.role == .thirdParty else { throw WrongRole("Only third parties organise runs.") }
        var errors: [RunViolation] = []
        let missing: [(RunField, Bool)] = [
            (.name, draft.name == nil), (.startsAt, draft.startsAt == nil), (.path, draft.path == nil),
            (.durationMinutes, draft.durationMinutes == nil), (.maxParticipants, draft.maxParticipants == nil),
        ]
        for (field, absent) in missing where absent { errors.append(RunViolation(field: field, message: "is required")) }
        var run = Run(
            id: UUID(), organiserID: principal.accountID, organiserName: "", name: "", startsAt: clock.now, durationMinutes: 0,
            maxParticipants: 0, path: RunPath(points: []), pathMetres: 0, cancelledAt: nil, createdAt: clock.now, participants: 0)
        Self.apply(draft, to: &run, now: clock.now, into: &errors)
        guard errors.isEmpty else { throw RunError.invalidDraft(errors) }
        return try await client.withTransaction(logger: logger) { connection in
            try await RunStore.insert(
                organiserID: principal.accountID, name: run.name, startsAt: run.startsAt, durationMinutes: run.durationMinutes,
                maxParticipants: run.maxParticipants, path: run.path, on: connection, logger: logger)
        }
    }

    /// Changes an upcoming run. Moving its time withdraws the requests already sent (their window was the
    /// old time) and the check-ins made; the run's day job sends new ones.
    package func edit(id: UUID, _ draft: Draft, by principal: Principal, logger: Logger) async throws -> Run {
        guard principal.role == .thirdParty else { throw WrongRole("Only the organiser edits a run.") }
        return try await client.withTransaction(logger: logger) { connection in
            var run = try await organisersRun(id, principal, on: connection, logger: logger)
            guard run.state(at: clock.now) == .upcoming else { throw RunError.closed("A run can be edited only before it starts.") }
            let before = run
            var errors: [RunViolation] = []
            Self.apply(draft, to: &run, now: clock.now, into: &errors)
            if run.maxParticipants < before.participants, errors.isEmpty { throw RunError.fewerPlacesThanRunners(before.participants) }
            guard errors.isEmpty else { throw RunError.invalidDraft(errors) }
            try await RunStore.update(run, on: connection, logger: logger)
            if run.startsAt != before.startsAt || run.durationMinutes != before.durationMinutes {
                for participant in try await RunStore.participants(run: id, on: connection, logger: logger) {
                    guard let requestID = participant.requestID else { continue }
                    try await singleRequests.withdrawForRun(
                        requestID: requestID, organiserID: run.organiserID, reason: "run moved", on: connection, logger: logger)
                }
                try await RunStore.forgetRequests(run: id, on: connection, logger: logger)
            }
            return try await RunStore.run(id: id, on: connection, logger: logger) ?? run
        }
    }

    /// Cancels a run that has not finished: every runner's request is withdrawn and every runner is mailed.
    package func cancel(id: UUID, by principal: Principal, logger: Logger) async throws -> Run {
        guard principal.role == .thirdParty else { throw WrongRole("Only the organiser cancels a run.") }
        return try await client.withTransaction(logger: logger) { connection in
            let run = try await organisersRun(id, principal, on: connection, logger: logger)
            switch run.state(at: clock.now) {
            case .cancelled: throw RunError.closed("The run is already cancelled.")
            case .finished: throw RunError.closed("The run has finished.")
            case .upcoming, .live: break
            }
            try await RunStore.cancel(id: id, on: connection, logger: logger)
            for participant in try await RunStore.participants(run: id, on: connection, logger: logger) {
                guard let requestID = participant.requestID else { continue }
                try await singleRequests.withdrawForRun(
                    requestID: requestID, organiserID: run.organiserID, reason: "run cancelled", on: connection, logger: logger)
            }
            let cancelled = try await RunStore.run(id: id, on: connection, logger: logger) ?? run
            // Written to the outbox with the cancellation: one row per runner, sent by the delivery loop, so
            // the organiser waits for no mail and every runner who wants it is told.
            for runner in try await RunStore.runnerIDs(run: id, on: connection, logger: logger) {
                try await outbox.notify(accountID: runner, kind: .runCancelled, on: connection, logger: logger) {
                    RunMail.cancelled(cancelled, to: $0, settingsURL: outbox.settingsURL)
                }
            }
            return cancelled
        }
    }

    /// The run if the caller organises it; another organiser's run is the 404 of an unknown one.
    private func organisersRun(_ id: UUID, _ principal: Principal, on connection: PostgresConnection, logger: Logger) async throws -> Run {
        guard let run = try await RunStore.run(id: id, locked: true, on: connection, logger: logger), run.organiserID == principal.accountID
        else { throw RunError.notFound }
        return run
    }

    /// Applies the draft's fields that are present, naming every invalid one.
    static func apply(_ draft: Draft, to run: inout Run, now: Date, into errors: inout [RunViolation]) {
        func fail(_ field: RunField, _ message: String) { errors.append(RunViolation(field: field, message: message)) }
        if let name = draft.name?.trimmingCharacters(in: .whitespacesAndNewlines) {
            if nameLength.contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                run.name = name
            } else {
                fail(.name, "must be 1–120 characters, without control characters")
            }
        }
        if let parsed = draft.startsAt {
            if case .value(let startsAt) = parsed {
                if startsAt < now.addingTimeInterval(RunRules.minimumLead) {
                    fail(.startsAt, "must be at least 5 minutes from now")
                } else if startsAt > now.addingTimeInterval(366 * 86_400) {
                    fail(.startsAt, "must be within a year")
                } else {
                    run.startsAt = startsAt
                }
            } else if case .unreadable(let reason) = parsed {
                fail(.startsAt, reason)
            }
        }
        if let minutes = draft.durationMinutes {
            if durations.contains(minutes) {
                run.durationMinutes = minutes
            } else {
                fail(.durationMinutes, "must be \(durations.lowerBound)–\(durations.upperBound)")
            }
        }
        if let places = draft.maxParticipants {
            if self.places.contains(places) {
                run.maxParticipants = places
            } else {
                fail(.maxParticipants, "must be \(self.places.lowerBound)–\(self.places.upperBound)")
            }
        }
        if let path = draft.path {
            switch path.format {
            case .value(let format):
                switch RunPath.parse(format: format, text: path.text) {
                case .success(let parsed): run.path = parsed
                case .failure(let unusable): fail(.path, unusable.message)
                }
            case .unreadable(let reason): fail(.pathFormat, reason)
            }
        }
    }

    // MARK: Anyone

    /// A page of runs in one state (R42).
    package func list(state: Run.State = .upcoming, page: PageRequest, logger: Logger) async throws -> Page<Run> {
        let (limit, after) = try page.readByTimeAndID()
        let runs = try await client.withConnection { connection in
            try await RunStore.list(state: state, after: after, limit: limit, on: connection, logger: logger)
        }
        return Page(rows: runs, limit: limit) { PageKey(time: $0.startsAt, id: $0.id) }
    }

    package func run(id: UUID, logger: Logger) async throws -> Run {
        guard let run = try await client.withConnection({ try await RunStore.run(id: id, on: $0, logger: logger) }) else {
            throw RunError.notFound
        }
        return run
    }

    /// Finishers ranked by their time, then the runners who started and did not finish (once the run ended).
    package func results(id: UUID, logger: Logger) async throws -> (run: Run, results: [RunResult]) {
        try await client.withConnection { connection in
            guard let run = try await RunStore.run(id: id, on: connection, logger: logger) else { throw RunError.notFound }
            let started = try await RunStore.participants(run: id, on: connection, logger: logger).filter {
                $0.checkedInAt != nil && $0.removedAt == nil
            }
            return (run, RunResult.ranking(of: started, startedAt: run.startsAt, over: run.state(at: clock.now) == .finished))
        }
    }
}
