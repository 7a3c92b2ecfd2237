import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird

/// Track4Run's public pages: the list of runs and each run's page (its path drawn by the server, the
/// runners moving live through server-sent events, the results). Nobody needs to sign in.
extension Console {
    func registerRunPages(on router: Router<BrokerRequestContext>) {
        get("/runs", .anyone, on: router) { request in
            request.page("runs", title: request.t("title.runs"), values: try await Self.runLists(request))
        }
        get("/runs/:id", .anyone, on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            let snapshot = try await request.services.runs.live(id: id, logger: request.logger)
            let (_, results) = try await request.services.runs.results(id: id, logger: request.logger)
            let run = snapshot.run
            let live = snapshot.state == .live
            let actions = try await Self.runActions(request, run, state: snapshot.state)
            return request.page(
                "run", title: run.name,
                values: actions.merging([
                    "id": run.id.uuidString.lowercased(), "organiser": run.organiserName, "startsAt": Wording.time(run.startsAt),
                    "endsAt": Wording.time(run.endsAt), "state": snapshot.state.rawValue, "live": live,
                    "stateWords": request.t("runState." + snapshot.state.rawValue),
                    "upcoming": snapshot.state == .upcoming,
                    "kilometres": request.strings.decimal(run.pathMetres / 1000), "participants": run.participants,
                    "places": run.maxParticipants,
                    "feed": live ? "/v1/runs/\(run.id.uuidString.lowercased())/live/events" : "",
                    "map": RunMap(path: run.path, runners: snapshot.runners).svg,
                    "runnersShown": snapshot.runners.count,
                    "results": results.map {
                        [
                            "rank": $0.rank.map(String.init) ?? "–", "bib": $0.bib, "name": $0.name,
                            "time": $0.seconds.map(Wording.raceTime) ?? request.t("run.didNotFinish"),
                        ] as [String: Any]
                    },
                    "hasResults": !results.isEmpty,
                ]) { first, _ in first })
        }
    }

    static let runFieldNames = ConsoleRequest.sameNames("name", "startsAt", "durationMinutes", "maxParticipants", "path")

    /// The form's name of a field of a run's draft. The format is a select the form always fills: an
    /// error on it (a forged form) is shown in the banner.
    static func runFieldName(_ field: RunField) -> String {
        switch field {
        case .name: "name"
        case .startsAt: "startsAt"
        case .durationMinutes: "durationMinutes"
        case .maxParticipants: "maxParticipants"
        case .path: "path"
        case .pathFormat: "pathFormat"
        }
    }

    /// The service's refusal of a draft with the form's field names, for `submitting` to show beside them.
    static func formNames<Value>(_ action: () async throws -> Value) async throws -> Value {
        do {
            return try await action()
        } catch RunError.invalidDraft(let violations) {
            throw Problem.validationFailed(violations.map { FieldError(field: runFieldName($0.field), message: $0.message) })
        }
    }

    /// Organisers create, edit and cancel their runs; people join, leave and check in, all on the services' rules.
    func registerRunActions(on router: Router<BrokerRequestContext>) {
        get("/company/runs/new", .role(.thirdParty), on: router) { request in
            request.page(
                "run-form", title: request.t("title.organise-a-run"),
                values: [
                    "action": "/company/runs/new", "submitLabel": request.t("runForm.create"),
                    "form": ["durationMinutes": "60", "maxParticipants": "100", "pathFormat": "gpx"],
                    "selected": ["pathFormat_gpx": true],
                ])
        }
        post("/company/runs/new", .role(.thirdParty), on: router) { request in
            try await request.submitting(
                "run-form", title: request.t("title.organise-a-run"),
                values: ["action": "/company/runs/new", "submitLabel": request.t("runForm.create")],
                fieldNames: Self.runFieldNames
            ) {
                let draft = try Self.runDraft(request.form)
                let run = try await Self.formNames { try await request.services.runs.create(draft, by: try request.caller, logger: request.logger) }
                return request.redirect("/runs/\(run.id.uuidString.lowercased())", notice: "run-created")
            }
        }
        get("/company/runs/:id/edit", .role(.thirdParty), on: router) { request in
            let run = try await request.services.runs.run(id: try request.id(orElse: RunError.notFound), logger: request.logger)
            guard run.organiserID == (try request.caller).accountID else { throw RunError.notFound }
            let id = run.id.uuidString.lowercased()
            return request.page(
                "run-form", title: request.t("title.change-run", ["name": run.name]),
                values: [
                    "action": "/company/runs/\(id)/edit", "submitLabel": request.t("runForm.save"), "editing": true,
                    "form": [
                        "name": run.name, "startsAt": Timestamp.rfc3339(run.startsAt), "durationMinutes": String(run.durationMinutes),
                        "maxParticipants": String(run.maxParticipants), "pathFormat": "gpx",
                    ],
                    "selected": ["pathFormat_gpx": true],
                ])
        }
        post("/company/runs/:id/edit", .role(.thirdParty), on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            return try await request.submitting(
                "run-form", title: request.t("title.change-the-run"),
                values: ["action": "/company/runs/\(id.uuidString.lowercased())/edit", "submitLabel": request.t("runForm.save"), "editing": true],
                fieldNames: Self.runFieldNames
            ) {
                // An empty path keeps the run's own (`runDraft` leaves it out).
                let draft = try Self.runDraft(request.form)
                _ = try await Self.formNames { try await request.services.runs.edit(id: id, draft, by: try request.caller, logger: request.logger) }
                return request.redirect("/runs/\(id.uuidString.lowercased())", notice: "run-changed")
            }
        }
        post("/runs/:id/cancel", .role(.thirdParty), on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            _ = try await request.services.runs.cancel(id: id, by: try request.caller, logger: request.logger)
            return request.redirect("/runs/\(id.uuidString.lowercased())", notice: "run-cancelled")
        }
        post("/runs/:id/join", .role(.user), on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            let name = request.form["displayName"].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
            _ = try await request.services.runs.join(id: id, displayName: name, by: try request.caller, logger: request.logger)
            return request.redirect("/runs/\(id.uuidString.lowercased())", notice: "run-joined")
        }
        post("/runs/:id/leave", .role(.user), on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            try await request.services.runs.leave(id: id, by: try request.caller, logger: request.logger)
            return request.redirect("/runs/\(id.uuidString.lowercased())", notice: "run-left")
        }
        post("/runs/:id/privacy-zone", .role(.user), on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            let form = request.form
            var errors: [FieldError] = []
            let metres = FormValues.integer(form["metres"], field: "metres", into: &errors)
            func degrees(_ field: String) -> Double? {
                guard let text = form[field] else { return nil }
                if let value = Double(text) { return value }
                errors.append(FieldError(field: field, message: "must be a number of degrees, such as 45.4642"))
                return nil
            }
            let (latitude, longitude) = (degrees("latitude"), degrees("longitude"))
            guard errors.isEmpty else { throw Problem.validationFailed(errors) }
            if form["remove"] != nil {
                _ = try await request.services.runs.setPrivacyZone(
                    id: id, latitude: nil, longitude: nil, metres: nil, by: try request.caller, logger: request.logger)
            } else {
                guard let latitude, let longitude else {
                    throw Problem.validationFailed([FieldError(field: "latitude", message: "and longitude are needed for a zone")])
                }
                _ = try await request.services.runs.setPrivacyZone(
                    id: id, latitude: latitude, longitude: longitude, metres: metres ?? 200, by: try request.caller, logger: request.logger)
            }
            return request.redirect("/runs/\(id.uuidString.lowercased())", notice: "run-zone")
        }
        post("/runs/:id/check-in", .role(.user), on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            _ = try await request.services.runs.checkIn(id: id, by: try request.caller, logger: request.logger)
            return request.redirect("/runs/\(id.uuidString.lowercased())", notice: "run-checked-in")
        }
    }

    /// The form's fields as the service's draft; an empty field is absent, a number that is not one is named.
    static func runDraft(_ form: FormFields) throws -> RunService.Draft {
        var errors: [FieldError] = []
        let duration = FormValues.integer(form["durationMinutes"], field: "durationMinutes", into: &errors)
        let places = FormValues.integer(form["maxParticipants"], field: "maxParticipants", into: &errors)
        guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        let format: Parsed<RunPath.Format> =
            switch form["pathFormat"] ?? "gpx" {
            case "gpx": .value(.gpx)
            case "geojson": .value(.geojson)
            default: .unreadable("must be gpx or geojson")
            }
        return RunService.Draft(
            name: form["name"], startsAt: form["startsAt"].map(RunService.Draft.time), durationMinutes: duration, maxParticipants: places,
            path: form.raw("path").isEmpty ? nil : .init(format: format, text: form.raw("path")))
    }

    /// What the signed-in visitor may do on a run's page: the organiser edits or cancels, a person joins,
    /// leaves or checks in.
    static func runActions(_ request: ConsoleRequest, _ run: Run, state: Run.State) async throws -> [String: Any] {
        guard let principal = request.principal else { return [:] }
        let open = state == .upcoming || state == .live
        switch principal.role {
        case .thirdParty where principal.accountID == run.organiserID:
            return ["isOrganiser": true, "canEdit": state == .upcoming, "canCancel": open]
        case .user:
            let place: RunParticipant
            do {
                place = try await request.services.runs.participation(id: run.id, by: principal, logger: request.logger)
            } catch RunError.notJoined {
                return ["canJoin": state == .upcoming]
            }
            var values: [String: Any] = [
                "bib": place.bib, "displayName": place.displayName ?? "", "publicName": place.publicName,
                "requestID": place.requestID?.uuidString.lowercased() ?? "",
                "requestStatus": place.requestStatus.map { request.t("status." + $0.rawValue) } ?? request.t("run.notSentYet"),
                "status": place.removedAt != nil
                    ? request.t("run.status.removed")
                    : request.t(
                        place.finishedAt != nil ? "run.status.finished" : place.checkedInAt != nil ? "run.status.checkedIn" : "run.status.joined"),
            ]
            if let zone = place.privacyZone {
                values["zone"] = ["latitude": String(zone.centre.latitude), "longitude": String(zone.centre.longitude), "metres": zone.metres]
            }
            return ["place": values, "canLeave": state == .upcoming, "canCheckIn": state == .upcoming && place.checkedInAt == nil]
        default:
            return [:]
        }
    }

    /// Live and upcoming runs (and the latest finished ones), as the home page and `/runs` show them.
    static func runLists(_ request: ConsoleRequest) async throws -> [String: Any] {
        func rows(_ state: Run.State, limit: Int) async throws -> [[String: Any]] {
            try await request.services.runs.list(state: state, page: PageRequest(limit: limit), logger: request.logger).items.map {
                [
                    "id": $0.id.uuidString.lowercased(), "name": $0.name, "organiser": $0.organiserName, "startsAt": Wording.time($0.startsAt),
                    "kilometres": request.strings.decimal($0.pathMetres / 1000), "participants": $0.participants,
                ]
            }
        }
        let live = try await rows(.live, limit: 20)
        let upcoming = try await rows(.upcoming, limit: 20)
        let finished = try await rows(.finished, limit: 5)
        return [
            "showsRuns": true, "liveRuns": live, "hasLiveRuns": !live.isEmpty, "upcomingRuns": upcoming, "hasUpcomingRuns": !upcoming.isEmpty,
            "finishedRuns": finished, "hasFinishedRuns": !finished.isEmpty,
        ]
    }
}
