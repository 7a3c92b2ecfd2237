import Foundation
import Logging
import PostgresNIO

/// People and runs: joining (R43–R45), leaving, checking in (R46/R47) and privacy zones.
extension RunService {
    /// Joins an upcoming run with the next bib. On the run's day the run's request is sent at once.
    package func join(id: UUID, displayName: String?, by principal: Principal, logger: Logger) async throws -> RunParticipant {
        guard principal.role == .user else { throw WrongRole("Only people join runs.") }
        // Stored as checked (`DisplayName`): what spectators see is what was checked.
        let name = try displayName.map(DisplayName.validated)
        try await client.withTransaction(logger: logger) { connection in
            // The run's row lock serialises joins: two cannot both take its last place.
            guard let run = try await RunStore.run(id: id, locked: true, on: connection, logger: logger) else { throw RunError.notFound }
            guard run.state(at: clock.now) == .upcoming else { throw RunError.closed("Only upcoming runs can be joined.") }
            if try await RunStore.participant(run: id, user: principal.accountID, on: connection, logger: logger) != nil {
                throw RunError.alreadyJoined
            }
            guard run.participants < run.maxParticipants else { throw RunError.full }
            let bib = try await RunStore.join(run: id, user: principal.accountID, displayName: name, on: connection, logger: logger)
            try await Self.announce(
                .runRunnerJoined, run: id, to: run.organiserID, data: ["bib": String(bib), "runners": String(run.participants + 1)],
                on: connection, logger: logger)
        }
        // On the run's day the request goes out at once (after the commit: no lease is held meanwhile).
        try await sendDueRequests(only: (id, principal.accountID), logger: logger)
        return try await participation(id: id, by: principal, logger: logger)
    }

    /// Leaves an upcoming run; the run's request to the runner, if sent, is withdrawn.
    package func leave(id: UUID, by principal: Principal, logger: Logger) async throws {
        guard principal.role == .user else { throw WrongRole("Only people leave runs.") }
        try await client.withTransaction(logger: logger) { connection in
            guard let run = try await RunStore.run(id: id, locked: true, on: connection, logger: logger) else { throw RunError.notFound }
            guard let participant = try await RunStore.participant(run: id, user: principal.accountID, on: connection, logger: logger)
            else { throw RunError.notJoined }
            guard run.state(at: clock.now) == .upcoming else {
                throw RunError.closed("The run has started: end the run's subscription to stop sharing your position.")
            }
            if let requestID = participant.requestID {
                try await singleRequests.withdrawForRun(
                    requestID: requestID, organiserID: run.organiserID, reason: "runner left", on: connection, logger: logger)
            }
            try await RunStore.leave(run: id, user: principal.accountID, on: connection, logger: logger)
            try await Self.announce(
                .runRunnerLeft, run: id, to: run.organiserID, data: ["bib": String(participant.bib), "runners": String(run.participants - 1)],
                on: connection, logger: logger)
        }
    }

    /// Checks the runner in: in the hour before the start, with the run's request accepted (so their position
    /// is shared, R46/R47), and a fresh position within the start area.
    package func checkIn(id: UUID, by principal: Principal, logger: Logger) async throws -> RunParticipant {
        guard principal.role == .user else { throw WrongRole("Only runners check in.") }
        try await client.withTransaction(logger: logger) { connection in
            // Locked: an edit that moves the start or the path, or the removal at the start, waits for the check-in.
            guard let run = try await RunStore.run(id: id, locked: true, on: connection, logger: logger) else { throw RunError.notFound }
            guard let participant = try await RunStore.participant(run: id, user: principal.accountID, on: connection, logger: logger),
                participant.removedAt == nil
            else { throw RunError.notJoined }
            let now = clock.now
            guard run.state(at: now) == .upcoming else { throw RunError.checkInRefused("Check-in closed when the run started.") }
            let opens = run.startsAt.addingTimeInterval(-RunRules.checkInWindow)
            guard now >= opens else { throw RunError.checkInRefused("Check-in opens at \(Timestamp.rfc3339(opens)), an hour before the start.") }
            guard participant.sharing else {
                throw RunError.checkInRefused(
                    participant.requestID == nil
                        ? "The run's request has not reached you yet; it is sent on the run's day."
                        : participant.requestStatus == .accepted
                            ? "You stopped sharing your position with the run; the run needs it."
                            : "Accept the run's request first: it shares your position, which the run needs.")
            }
            guard
                let here = try await RunStore.freshPosition(of: principal.accountID, within: RunRules.freshPosition, on: connection, logger: logger)
            else { throw RunError.checkInRefused("No position of yours in the last 5 minutes: start sharing your location, then check in.") }
            let distance = here.distance(to: run.path.start)
            guard distance <= RunRules.startAreaMetres else {
                throw RunError.checkInRefused(
                    "You are \(Int(distance.rounded())) m from the start; check in within \(Int(RunRules.startAreaMetres)) m.")
            }
            try await RunStore.checkIn(run: id, user: principal.accountID, on: connection, logger: logger)
        }
        return try await participation(id: id, by: principal, logger: logger)
    }

    /// Sets (or, with nil, removes) the zone where the runner's track is hidden from spectators, with its
    /// disguise (`PrivacyZone.Disguise`): the person's disguise of that home if they have one (kept when a
    /// zone is removed or they leave a run), else a new one.
    package func setPrivacyZone(id: UUID, latitude: Double?, longitude: Double?, metres: Int?, by principal: Principal, logger: Logger)
        async throws -> RunParticipant
    {
        guard principal.role == .user else { throw WrongRole("Only runners set a privacy zone.") }
        var point: (centre: GeoPoint, metres: Int)?
        if latitude != nil || longitude != nil || metres != nil {
            var errors: [FieldError] = []
            if !(-90...90).contains(latitude ?? .nan) { errors.append(FieldError(field: "latitude", message: "must be -90–90")) }
            if !(-180...180).contains(longitude ?? .nan) { errors.append(FieldError(field: "longitude", message: "must be -180–180")) }
            let radius = metres ?? 200
            if !PrivacyZone.metresRange.contains(radius) { errors.append(FieldError(field: "metres", message: "must be 100–1000")) }
            guard errors.isEmpty, let latitude, let longitude else { throw RunError.invalid(errors) }
            point = (GeoPoint(latitude: latitude, longitude: longitude), radius)
        }
        try await client.withTransaction(logger: logger) { connection in
            guard try await RunStore.run(id: id, on: connection, logger: logger) != nil else { throw RunError.notFound }
            guard try await RunStore.participant(run: id, user: principal.accountID, on: connection, logger: logger) != nil else {
                throw RunError.notJoined
            }
            var zone: PrivacyZone?
            if let (centre, metres) = point {
                // One disguise per person and home, in every run and whenever (`PrivacyZone.Disguise`).
                try await RunStore.lockDisguises(of: principal.accountID, on: connection, logger: logger)
                let earlier = try await RunStore.disguises(of: principal.accountID, on: connection, logger: logger)
                let disguise = PrivacyZone.disguise(for: centre, metres: metres, earlier: earlier) {
                    PrivacyZone.Disguise.draw(home: centre, metres: metres)
                }
                zone = PrivacyZone(
                    centre: centre, metres: metres,
                    disguise: try await RunStore.saveDisguise(disguise, of: principal.accountID, on: connection, logger: logger))
            }
            try await RunStore.setPrivacyZone(zone, run: id, user: principal.accountID, on: connection, logger: logger)
        }
        return try await participation(id: id, by: principal, logger: logger)
    }

    /// The caller's place in the run.
    package func participation(id: UUID, by principal: Principal, logger: Logger) async throws -> RunParticipant {
        guard principal.role == .user else { throw WrongRole("Only people take part in runs.") }
        guard
            let participant = try await client.withConnection({
                try await RunStore.participant(run: id, user: principal.accountID, on: $0, logger: logger)
            })
        else {
            guard try await client.withConnection({ try await RunStore.run(id: id, on: $0, logger: logger) }) != nil else { throw RunError.notFound }
            throw RunError.notJoined
        }
        return participant
    }

    /// The runs the person joined, latest first.
    package func participations(of principal: Principal, logger: Logger) async throws -> [(Run, RunParticipant)] {
        guard principal.role == .user else { throw WrongRole("Only people take part in runs.") }
        return try await client.withConnection { try await RunStore.participations(of: principal.accountID, on: $0, logger: logger) }
    }
}
