import Foundation
import Hummingbird

/// Track4Run's public pages: the list of runs and each run's page (its path drawn by the server, the
/// runners moving live through server-sent events, the results). Nobody needs to sign in.
extension Console {
    func registerRunPages(on router: Router<BrokerRequestContext>) {
        get("/runs", .anyone, on: router) { request in
            request.page("runs", title: "Runs", values: try await Self.runLists(request))
        }
        get("/runs/:id", .anyone, on: router) { request in
            let id = try request.id(orElse: RunError.notFound)
            let snapshot = try await request.services.runs.live(id: id, logger: request.logger)
            let (_, results) = try await request.services.runs.results(id: id, logger: request.logger)
            let run = snapshot.run
            let live = snapshot.state == .live
            return request.page(
                "run", title: run.name,
                values: [
                    "id": run.id.uuidString.lowercased(), "organiser": run.organiserName, "startsAt": Wording.time(run.startsAt),
                    "endsAt": Wording.time(run.endsAt), "state": snapshot.state.rawValue, "live": live,
                    "upcoming": snapshot.state == .upcoming,
                    "kilometres": String(format: "%.1f", run.pathMetres / 1000), "participants": run.participants,
                    "places": run.maxParticipants,
                    "feed": live ? "/v1/runs/\(run.id.uuidString.lowercased())/live/events" : "",
                    "map": RunMap(path: run.path, runners: snapshot.runners).svg,
                    "runnersShown": snapshot.runners.count,
                    "results": results.map {
                        [
                            "rank": $0.rank.map(String.init) ?? "–", "bib": $0.bib, "name": $0.name,
                            "time": $0.seconds.map(Wording.raceTime) ?? "did not finish",
                        ] as [String: Any]
                    },
                    "hasResults": !results.isEmpty,
                ])
        }
    }

    /// Live and upcoming runs (and the latest finished ones), as the home page and `/runs` show them.
    static func runLists(_ request: ConsoleRequest) async throws -> [String: Any] {
        func rows(_ state: String, limit: Int) async throws -> [[String: Any]] {
            try await request.services.runs.list(state: state, cursor: nil, limit: limit, logger: request.logger).runs.map {
                [
                    "id": $0.id.uuidString.lowercased(), "name": $0.name, "organiser": $0.organiserName, "startsAt": Wording.time($0.startsAt),
                    "kilometres": String(format: "%.1f", $0.pathMetres / 1000), "participants": $0.participants,
                ]
            }
        }
        let live = try await rows("live", limit: 20)
        let upcoming = try await rows("upcoming", limit: 20)
        let finished = try await rows("finished", limit: 5)
        return [
            "showsRuns": true, "liveRuns": live, "hasLiveRuns": !live.isEmpty, "upcomingRuns": upcoming, "hasUpcomingRuns": !upcoming.isEmpty,
            "finishedRuns": finished, "hasFinishedRuns": !finished.isEmpty,
        ]
    }
}
