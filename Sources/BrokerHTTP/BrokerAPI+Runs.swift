import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func listRuns(_ input: Operations.ListRuns.Input) async throws -> Operations.ListRuns.Output {
        let page = try await services.runs.list(
            state: input.query.state.map(Run.State.init) ?? .upcoming, page: PageRequest(limit: input.query.limit, cursor: input.query.cursor),
            logger: logger)
        return .ok(.init(body: .json(.init(items: page.items.map { .init($0, withPath: false) }, nextCursor: page.next?.text))))
    }

    func createRun(_ input: Operations.CreateRun.Input) async throws -> Operations.CreateRun.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let run = try await services.runs.create(.init(body), by: principal, logger: logger)
        return .created(.init(body: .json(.init(run, withPath: true))))
    }

    func getRun(_ input: Operations.GetRun.Input) async throws -> Operations.GetRun.Output {
        .ok(.init(body: .json(.init(try await services.runs.run(id: try runID(input.path.id), logger: logger), withPath: true))))
    }

    func editRun(_ input: Operations.EditRun.Input) async throws -> Operations.EditRun.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let run = try await services.runs.edit(id: try runID(input.path.id), .init(body), by: principal, logger: logger)
        return .ok(.init(body: .json(.init(run, withPath: true))))
    }

    func cancelRun(_ input: Operations.CancelRun.Input) async throws -> Operations.CancelRun.Output {
        let run = try await services.runs.cancel(id: try runID(input.path.id), by: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(run, withPath: true))))
    }

    func getRunResults(_ input: Operations.GetRunResults.Input) async throws -> Operations.GetRunResults.Output {
        let (run, results) = try await services.runs.results(id: try runID(input.path.id), logger: logger)
        return .ok(
            .init(
                body: .json(
                    .init(
                        runId: run.id.uuidString.lowercased(), state: .init(run.state(at: services.runs.clock.now)),
                        items: results.map { .init(rank: $0.rank, bib: $0.bib, name: $0.name, seconds: $0.seconds) }))))
    }

    func getRunLive(_ input: Operations.GetRunLive.Input) async throws -> Operations.GetRunLive.Output {
        let snapshot = try await services.runs.live(id: try runID(input.path.id), logger: logger)
        return .ok(
            .init(
                body: .json(
                    .init(
                        runId: snapshot.run.id.uuidString.lowercased(), state: .init(snapshot.state), at: snapshot.newest,
                        runners: snapshot.runners.map {
                            .init(
                                bib: $0.bib, name: $0.name, latitude: $0.point.latitude, longitude: $0.point.longitude, at: $0.at,
                                finished: $0.finished)
                        }))))
    }

    func streamRunLive(_ input: Operations.StreamRunLive.Input) async throws -> Operations.StreamRunLive.Output {
        throw Problem.status(.internalServerError, detail: "The live feed is served by the streaming endpoint.")
    }

    func joinRun(_ input: Operations.JoinRun.Input) async throws -> Operations.JoinRun.Output {
        let principal = try await caller()
        var displayName: String?
        if case .json(let body)? = input.body { displayName = body.displayName }
        let participant = try await services.runs.join(id: try runID(input.path.id), displayName: displayName, by: principal, logger: logger)
        return .created(.init(body: .json(.init(participant))))
    }

    func getRunParticipation(_ input: Operations.GetRunParticipation.Input) async throws -> Operations.GetRunParticipation.Output {
        .ok(.init(body: .json(.init(try await services.runs.participation(id: try runID(input.path.id), by: try await caller(), logger: logger)))))
    }

    func leaveRun(_ input: Operations.LeaveRun.Input) async throws -> Operations.LeaveRun.Output {
        try await services.runs.leave(id: try runID(input.path.id), by: try await caller(), logger: logger)
        return .noContent(.init())
    }

    func checkInToRun(_ input: Operations.CheckInToRun.Input) async throws -> Operations.CheckInToRun.Output {
        .ok(.init(body: .json(.init(try await services.runs.checkIn(id: try runID(input.path.id), by: try await caller(), logger: logger)))))
    }

    func setRunPrivacyZone(_ input: Operations.SetRunPrivacyZone.Input) async throws -> Operations.SetRunPrivacyZone.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let participant = try await services.runs.setPrivacyZone(
            id: try runID(input.path.id), latitude: body.latitude, longitude: body.longitude, metres: body.metres ?? 200, by: principal,
            logger: logger)
        return .ok(.init(body: .json(.init(participant))))
    }

    func removeRunPrivacyZone(_ input: Operations.RemoveRunPrivacyZone.Input) async throws -> Operations.RemoveRunPrivacyZone.Output {
        let participant = try await services.runs.setPrivacyZone(
            id: try runID(input.path.id), latitude: nil, longitude: nil, metres: nil, by: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(participant))))
    }

    func listMyRuns(_ input: Operations.ListMyRuns.Input) async throws -> Operations.ListMyRuns.Output {
        let joined = try await services.runs.participations(of: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(items: joined.map { run, participant in .init(participant, run: run) }))))
    }

    /// A malformed id names no run: the same 404 as an unknown one.
    func runID(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw RunError.notFound }
        return id
    }
}

extension Components.Schemas.GeoPoint {
    init(_ point: GeoPoint) { self.init(latitude: point.latitude, longitude: point.longitude) }
}

extension Components.Schemas.Run {
    init(_ run: Run, withPath: Bool) {
        self.init(
            id: run.id.uuidString.lowercased(), name: run.name,
            organiser: .init(id: run.organiserID.uuidString.lowercased(), companyName: run.organiserName), startsAt: run.startsAt,
            endsAt: run.endsAt, durationMinutes: run.durationMinutes, maxParticipants: run.maxParticipants, participants: run.participants,
            state: .init(run.state(at: Date())), pathMetres: run.pathMetres.rounded(), start: .init(run.path.start), finish: .init(run.path.finish),
            path: withPath ? run.path.points.map(Components.Schemas.GeoPoint.init) : [])
    }
}

extension Components.Schemas.RunParticipation {
    init(_ participant: RunParticipant, run: Run? = nil) {
        let status: StatusPayload =
            if participant.removedAt != nil { .removed } else if participant.finishedAt != nil { .finished } else if participant.checkedInAt != nil {
                .checkedIn
            } else { .joined }
        self.init(
            runId: participant.runID.uuidString.lowercased(), bib: participant.bib, displayName: participant.displayName,
            joinedAt: participant.joinedAt, requestId: participant.requestID?.uuidString.lowercased(),
            requestStatus: participant.requestStatus.map(Components.Schemas.SingleRequestStatus.init), status: status,
            checkedInAt: participant.checkedInAt, finishedAt: participant.finishedAt,
            privacyZone: participant.privacyZone.map { .init(latitude: $0.centre.latitude, longitude: $0.centre.longitude, metres: $0.metres) },
            run: run.map { .init($0, withPath: false) })
    }
}

extension Run.State {
    init(_ state: Components.Schemas.RunState) {
        switch state {
        case .upcoming: self = .upcoming
        case .live: self = .live
        case .finished: self = .finished
        case .cancelled: self = .cancelled
        }
    }
}
