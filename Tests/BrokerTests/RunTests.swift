import AsyncHTTPClient
import BrokerOpenAPI
import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Track4Run through the API (issue 19): one test per requirement of the original design (R36–R51) at
/// least, and the attacks on each rule.
@Suite("Runs")
struct RunTests {
    private func items(_ harness: TestHarness, _ path: String, token: String? = nil) async throws -> [[String: Any]] {
        let response = try await harness.request(.get, path, token: token)
        try #require(response.status == .ok, "\(path) answered \(response.status): \(harness.text(response))")
        return try harness.object(response)["items"] as? [[String: Any]] ?? []
    }

    @Test("R36/R37: an organiser creates a run from GPX or GeoJSON; a person cannot; bad input is named and stores nothing")
    func create() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let created = try await harness.request(.post, "/v1/runs", json: RunFixtures.creation().contractJSON, token: organiser)
            #expect(created.status == .created, "\(harness.text(created))")
            let run = try harness.object(created)
            #expect(run["state"] as? String == "upcoming")
            #expect(run["participants"] as? Int == 0)
            #expect((run["pathMetres"] as? Double).map { (1300...1380).contains($0) } == true, "\(run["pathMetres"] ?? "")")
            #expect((run["path"] as? [[String: Any]])?.count == 3)
            #expect((run["organiser"] as? [String: Any])?["companyName"] as? String == "Milano Runners S.S.D.")

            var fromGeoJSON = RunFixtures.creation()
            fromGeoJSON.path = .init(format: .geojson, data: RunFixtures.geoJSON)
            let geo = try await harness.request(.post, "/v1/runs", json: fromGeoJSON.contractJSON, token: organiser)
            #expect(geo.status == .created, "\(harness.text(geo))")
            #expect(try harness.object(geo)["pathMetres"] as? Double == run["pathMetres"] as? Double)

            let person = try await RunFixtures.runner(harness)
            #expect(try await harness.request(.post, "/v1/runs", json: RunFixtures.creation().contractJSON, token: person.token).status == .forbidden)
            #expect(try await harness.request(.post, "/v1/runs", json: RunFixtures.creation().contractJSON).status == .unauthorized)

            var wrong = RunFixtures.creation(startingIn: -60, places: 0)
            wrong.durationMinutes = 5
            wrong.path = .init(format: .gpx, data: "<gpx><trk><trkseg><trkpt lat=\"95\" lon=\"9\"/></trkseg></trk></gpx>")
            let refused = try await harness.request(.post, "/v1/runs", json: wrong.contractJSON, token: organiser)
            #expect(refused.status == .unprocessableContent)
            let fields = Set((try harness.object(refused)["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String })
            #expect(fields == ["startsAt", "durationMinutes", "maxParticipants", "path"], "\(harness.text(refused))")
            // A time that is no time is named beside every other problem, not alone.
            var unreadable = RunFixtures.creation()
            (unreadable.startsAt, unreadable.durationMinutes) = ("tomorrow morning", 5)
            let both = try await harness.request(.post, "/v1/runs", json: unreadable.contractJSON, token: organiser)
            #expect(both.status == .unprocessableContent)
            #expect(Set(try harness.errorFields(both)) == ["startsAt", "durationMinutes"], "\(harness.text(both))")
            #expect(harness.text(both).contains("RFC 3339"))
            var lineless = RunFixtures.creation()
            lineless.path = .init(format: .geojson, data: #"{"type":"Point","coordinates":[9.17,45.47]}"#)
            let point = try await harness.request(.post, "/v1/runs", json: lineless.contractJSON, token: organiser)
            #expect(point.status == .unprocessableContent)
            #expect(harness.text(point).contains("upload a LineString"))
            #expect(try await harness.sql("SELECT 1 FROM runs").count == 2)
        }
    }

    @Test("R42: anyone lists runs without signing in, by state; an unknown or malformed id is a 404")
    func publicList() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let soon = try await RunFixtures.run(harness, organiser: organiser, startingIn: 600)
            let later = try await RunFixtures.run(harness, organiser: organiser, startingIn: 7200)
            let live = try await RunFixtures.run(harness, organiser: organiser)
            try await RunFixtures.start(harness, live)
            #expect(try await items(harness, "/v1/runs").compactMap { $0["id"] as? String } == [soon, later])
            #expect(try await items(harness, "/v1/runs?state=live").compactMap { $0["id"] as? String } == [live])
            #expect(try await items(harness, "/v1/runs?state=finished").isEmpty)
            let page = try await harness.request(.get, "/v1/runs?limit=1")
            let next = try #require(try harness.object(page)["nextCursor"] as? String)
            #expect(try await items(harness, "/v1/runs?limit=1&cursor=\(next)").compactMap { $0["id"] as? String } == [later])
            #expect(try await harness.request(.get, "/v1/runs/\(soon)").status == .ok)
            #expect(try await harness.request(.get, "/v1/runs/\(UUID())").status == .notFound)
            #expect(try await harness.request(.get, "/v1/runs/not-a-uuid").status == .notFound)
            #expect(try await harness.request(.get, "/v1/runs?state=someday").status == .unprocessableContent)
        }
    }

    @Test("R43/R44: only people join, once each, and never beyond the maximum, even all at once")
    func joinRespectsTheMaximum() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 86_400, places: 2)
            var runners: [String] = []
            for index in 0..<4 { runners.append(try await RunFixtures.runner(harness, fullName: "Runner \(index)").token) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for token in runners {
                    group.addTask { try await harness.request(.post, "/v1/runs/\(run)/participation", token: token).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 2, "\(statuses)")
            #expect(statuses.filter { $0 == .conflict }.count == 2, "\(statuses)")
            let bibs = try await harness.sql("SELECT bib FROM run_participants WHERE run_id = '\(run)' ORDER BY bib")
            #expect(try bibs.map { try $0.decode(Int.self) } == [1, 2])

            let other = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 86_400)
            _ = try await RunFixtures.join(harness, other, token: runners[0])
            let again = try await harness.request(.post, "/v1/runs/\(other)/participation", token: runners[0])
            #expect(again.status == .conflict)
            #expect(try harness.object(again)["type"] as? String == "https://data4help.example/problems/already-joined")
            #expect(try await harness.request(.post, "/v1/runs/\(other)/participation", token: organiser).status == .forbidden)
            let badName = try await harness.request(
                .post, "/v1/runs/\(other)/participation", json: #"{"displayName":"\#(String(repeating: "x", count: 41))"}"#, token: runners[1])
            #expect(badName.status == .unprocessableContent)
        }
    }

    @Test("R45: runs that started or were cancelled are not joinable")
    func onlyUpcomingRunsAreJoinable() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let live = try await RunFixtures.run(harness, organiser: organiser)
            try await RunFixtures.start(harness, live)
            let late = try await harness.request(.post, "/v1/runs/\(live)/participation", token: runner.token)
            #expect(late.status == .conflict, "\(harness.text(late))")
            #expect(try harness.object(late)["type"] as? String == "https://data4help.example/problems/run-closed")
            let cancelled = try await RunFixtures.run(harness, organiser: organiser)
            #expect(try await harness.request(.post, "/v1/runs/\(cancelled)/cancel", token: organiser).status == .ok)
            #expect(try await harness.request(.post, "/v1/runs/\(cancelled)/participation", token: runner.token).status == .conflict)
            #expect(try await items(harness, "/v1/runs?state=cancelled").compactMap { $0["id"] as? String } == [cancelled])
        }
    }

    @Test("R38–R41: on the run's day each runner gets the organiser's request for position and heart rate, a subscription")
    func dayOfRunRequests() async throws {
        try await TestHarness.run(configure: RunFixtures.fast) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let distant = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 86_400)
            let place = try await RunFixtures.join(harness, distant, token: runner.token, displayName: "Lightning")
            #expect(place["bib"] as? Int == 1 && place["displayName"] as? String == "Lightning")
            #expect(place["requestId"] == nil, "three days ahead: no request yet")

            // The run's day comes: the day's job sends the request.
            _ = try await harness.sql("UPDATE runs SET starts_at = now() + interval '2 hours' WHERE id = '\(distant)'")
            #expect(
                await eventually {
                    try await harness.object(try await harness.request(.get, "/v1/runs/\(distant)/participation", token: runner.token))["requestId"]
                        != nil
                })
            let received = try await items(harness, "/v1/single-requests", token: runner.token)
            let request = try #require(received.first)
            #expect(request["types"] as? [String] == ["position", "heart_rate"])
            #expect((request["subscription"] as? [String: Any])?["days"] as? Int == 2)
            #expect((request["thirdParty"] as? [String: Any])?["companyName"] as? String == "Milano Runners S.S.D.")
            #expect((request["purpose"] as? String)?.contains("Sempione 1K") == true)
            // The organiser knows its runners by bib: the run's request names no one to it.
            let sent = try await items(harness, "/v1/single-requests", token: organiser)
            #expect(sent.count == 1)
            let subject = sent.first?["subject"] as? [String: Any] ?? [:]
            #expect(subject["email"] == nil && subject["fiscalCode"] == nil, "\(subject)")
            #expect(
                !(try await harness.request(.get, "/v1/single-requests", token: organiser)).body.readableBytesView.contains(
                    Array(runner.email.utf8)))

            // Joining on the day sends it at once.
            let today = try await RunFixtures.run(harness, organiser: organiser)
            let second = try await RunFixtures.runner(harness, fullName: "Marco Neri")
            #expect(try await RunFixtures.join(harness, today, token: second.token)["requestId"] != nil)
        }
    }

    @Test("R46/R47: check-in needs the accepted request (position shared), the hour before the start, and the start area")
    func checkIn() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: { $0.clock = clock.wall }) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser)
            _ = try await RunFixtures.join(harness, run, token: runner.token)
            func checkIn() async throws -> (HTTPResponse.Status, String) {
                let response = try await harness.request(.post, "/v1/runs/\(run)/participation/check-in", token: runner.token)
                return (response.status, (try? harness.object(response)["detail"] as? String) ?? harness.text(response))
            }
            let unaccepted = try await checkIn()
            #expect(unaccepted.0 == .conflict && unaccepted.1.contains("Accept the run's request"), "\(unaccepted)")
            try await RunFixtures.acceptRunRequest(harness, run, token: runner.token)
            let blind = try await checkIn()
            #expect(blind.0 == .conflict && blind.1.contains("No position"), "\(blind)")
            try await RunFixtures.position(harness, RunFixtures.b, token: runner.token)
            let far = try await checkIn()
            #expect(far.0 == .conflict && far.1.contains("m from the start"), "\(far)")
            // An old fix at the start, uploaded now, is not where the runner is.
            try await RunFixtures.position(harness, RunFixtures.a, secondsAgo: 900, token: runner.token)
            #expect(try await checkIn().0 == .conflict)
            try await RunFixtures.position(harness, GeoPoint(latitude: 45.4703, longitude: 9.1702), token: runner.token)
            let done = try await checkIn()
            #expect(done.0 == .ok, "\(done)")
            let place = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/participation", token: runner.token))
            #expect(place["status"] as? String == "checked_in")

            let early = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 3600)
            _ = try await RunFixtures.join(harness, early, token: runner.token)
            try await RunFixtures.acceptRunRequest(harness, early, token: runner.token)
            let notYet = try await harness.request(.post, "/v1/runs/\(early)/participation/check-in", token: runner.token)
            #expect(notYet.status == .conflict)
            #expect(harness.text(notYet).contains("Check-in opens"))
            #expect(try await harness.request(.post, "/v1/runs/\(early)/participation/check-in", token: organiser).status == .forbidden)
            // Two hours on by the server's clock (no sleeping, no moving the run): the hour before the start has come.
            clock.advance(by: .seconds(2 * 3600 + 60))
            try await RunFixtures.position(harness, RunFixtures.a, token: runner.token)
            let opened = try await harness.request(.post, "/v1/runs/\(early)/participation/check-in", token: runner.token)
            #expect(opened.status == .ok, "\(harness.text(opened))")
        }
    }

    @Test("R47: a runner who refuses the run's request cannot check in")
    func refusingMeansNoCheckIn() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser)
            let place = try await RunFixtures.join(harness, run, token: runner.token)
            let requestID = try #require(place["requestId"] as? String)
            #expect(try await harness.request(.post, "/v1/single-requests/\(requestID)/refuse", token: runner.token).status == .ok)
            try await RunFixtures.position(harness, RunFixtures.a, token: runner.token)
            let refused = try await harness.request(.post, "/v1/runs/\(run)/participation/check-in", token: runner.token)
            #expect(refused.status == .conflict)

            // Accepting, then ending the subscription, is not sharing either.
            let quitter = try await RunFixtures.runner(harness, fullName: "Quitter Runner")
            let quitterPlace = try await RunFixtures.join(harness, run, token: quitter.token)
            let quitterRequest = try #require(quitterPlace["requestId"] as? String)
            #expect(try await harness.request(.post, "/v1/single-requests/\(quitterRequest)/accept", token: quitter.token).status == .ok)
            #expect(try await harness.request(.delete, "/v1/single-requests/\(quitterRequest)/subscription", token: quitter.token).status == .ok)
            try await RunFixtures.position(harness, RunFixtures.a, token: quitter.token)
            let stopped = try await harness.request(.post, "/v1/runs/\(run)/participation/check-in", token: quitter.token)
            #expect(stopped.status == .conflict)
            #expect(harness.text(stopped).contains("stopped sharing"), "\(harness.text(stopped))")
        }
    }

    @Test("R48: a runner not checked in by the start is removed, and the run's request to them is withdrawn")
    func removalAtTheStart() async throws {
        try await TestHarness.run(configure: RunFixtures.fast) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let ready = try await RunFixtures.runner(harness, fullName: "Ready Runner")
            let late = try await RunFixtures.runner(harness, fullName: "Late Runner")
            let run = try await RunFixtures.run(harness, organiser: organiser)
            _ = try await RunFixtures.join(harness, run, token: ready.token)
            let latePlace = try await RunFixtures.join(harness, run, token: late.token)
            try await RunFixtures.checkIn(harness, run, token: ready.token)
            try await RunFixtures.start(harness, run)
            #expect(
                await eventually {
                    try harness.object(try await harness.request(.get, "/v1/runs/\(run)/participation", token: late.token))["status"] as? String
                        == "removed"
                })
            let lateRequest = try #require(latePlace["requestId"] as? String)
            let seen = try harness.object(try await harness.request(.get, "/v1/single-requests/\(lateRequest)", token: late.token))
            #expect(seen["status"] as? String == "cancelled")
            let kept = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/participation", token: ready.token))
            #expect(kept["status"] as? String == "checked_in")
            #expect(try harness.object(try await harness.request(.get, "/v1/runs/\(run)"))["participants"] as? Int == 1)
        }
    }

    @Test("finish: passing the middle, then reaching the finish; results ranked by time, by bib or display name only")
    func finishAndResults() async throws {
        try await TestHarness.run(configure: RunFixtures.fast) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let fast = try await RunFixtures.runner(harness, fullName: "Anna Rossi")
            let slow = try await RunFixtures.runner(harness, fullName: "Bruno Gialli")
            let run = try await RunFixtures.run(harness, organiser: organiser)
            _ = try await RunFixtures.join(harness, run, token: fast.token, displayName: "Anna R.")
            _ = try await RunFixtures.join(harness, run, token: slow.token)
            try await RunFixtures.checkIn(harness, run, token: fast.token)
            try await RunFixtures.checkIn(harness, run, token: slow.token)
            try await RunFixtures.start(harness, run, secondsAgo: 600)
            let middle = RunPath(points: [RunFixtures.a, RunFixtures.b, RunFixtures.c]).middle
            // At the finish without the middle: a loop's runner standing at the start has not finished.
            try await RunFixtures.position(harness, RunFixtures.c, secondsAgo: 590, token: slow.token)
            for (point, ago) in [(RunFixtures.a, 580.0), (middle, 400), (RunFixtures.c, 300)] {
                try await RunFixtures.position(harness, point, secondsAgo: ago, token: fast.token)
            }
            for (point, ago) in [(middle, 200.0), (RunFixtures.c, 100)] {
                try await RunFixtures.position(harness, point, secondsAgo: ago, token: slow.token)
            }
            #expect(
                await eventually {
                    try await items(harness, "/v1/runs/\(run)/results").count == 2
                })
            let results = try await items(harness, "/v1/runs/\(run)/results")
            #expect(results.map { $0["name"] as? String } == ["\u{2068}Anna R.\u{2069} · Bib 1", "Bib 2"])
            #expect(results.map { $0["rank"] as? Int } == [1, 2])
            #expect((results[0]["seconds"] as? Double).map { abs($0 - 300) < 2 } == true, "\(results)")
            let body = harness.text(try await harness.request(.get, "/v1/runs/\(run)/results"))
            for secret in ["Anna Rossi", "Bruno Gialli", fast.email, slow.email] { #expect(!body.contains(secret)) }
        }
    }

    @Test("R49–R51: anyone sees each checked-in runner live by bib or name, never identity; revocation hides them at once")
    func spectating() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: {
            RunFixtures.fast(&$0)
            $0.clock = clock.wall
        }) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness, fullName: "Chiara Blu")
            let other = try await RunFixtures.runner(harness, fullName: "Dario Viola")
            let run = try await RunFixtures.run(harness, organiser: organiser)
            let place = try await RunFixtures.join(harness, run, token: runner.token, displayName: "Chiara")
            _ = try await RunFixtures.join(harness, run, token: other.token)
            try await RunFixtures.checkIn(harness, run, token: runner.token)
            try await RunFixtures.checkIn(harness, run, token: other.token)
            func live() async throws -> [[String: Any]] {
                let response = try await harness.request(.get, "/v1/runs/\(run)/live")
                try #require(response.status == .ok)
                for secret in ["Chiara Blu", "Dario Viola", runner.email, other.email] { #expect(!harness.text(response).contains(secret)) }
                return try harness.object(response)["runners"] as? [[String: Any]] ?? []
            }
            #expect(try await live().isEmpty, "before the start nothing is shown, not even the check-in fix")
            try await RunFixtures.start(harness, run)
            try await RunFixtures.position(harness, RunFixtures.b, secondsAgo: 5, token: runner.token)
            try await RunFixtures.position(harness, RunFixtures.a, secondsAgo: 3, token: other.token)
            let shown = try await live()
            #expect(shown.map { $0["name"] as? String } == ["\u{2068}Chiara\u{2069} · Bib 1", "Bib 2"])
            #expect(shown.first?["latitude"] as? Double == RunFixtures.b.latitude)

            // The runner ends the run's subscription: gone from the very next read.
            let requestID = try #require(place["requestId"] as? String)
            #expect(try await harness.request(.delete, "/v1/single-requests/\(requestID)/subscription", token: runner.token).status == .ok)
            #expect(try await live().map { $0["name"] as? String } == ["Bib 2"])

            // After the run (an hour long): the path and results, no tracks. Only the server's clock moves.
            clock.advance(by: .seconds(2 * 3600))
            #expect(try await live().isEmpty)
            #expect(try harness.object(try await harness.request(.get, "/v1/runs/\(run)/live"))["state"] as? String == "finished")
        }
    }

    @Test("privacy zone: a runner's positions within it are never shown to spectators")
    func privacyZone() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser)
            _ = try await RunFixtures.join(harness, run, token: runner.token)
            try await RunFixtures.checkIn(harness, run, token: runner.token)
            let zone = try await harness.request(
                .put, "/v1/runs/\(run)/participation/privacy-zone", json: #"{"latitude":45.4700,"longitude":9.1800,"metres":300}"#,
                token: runner.token)
            #expect(zone.status == .ok, "\(harness.text(zone))")
            // The runner sees their zone as they entered it (spectators never do: RunPrivacyZoneTests).
            let entered = try harness.object(zone)["privacyZone"] as? [String: Any]
            #expect(entered?["metres"] as? Int == 300 && entered?["latitude"] as? Double == 45.47 && entered?["longitude"] as? Double == 9.18)
            let tooSmall = try await harness.request(
                .put, "/v1/runs/\(run)/participation/privacy-zone", json: #"{"latitude":45.47,"longitude":9.18,"metres":50}"#, token: runner.token)
            #expect(tooSmall.status == .unprocessableContent)
            try await RunFixtures.start(harness, run)
            // 150 m from B: inside the zone (and newer than the check-in's fix at the start).
            try await RunFixtures.position(harness, GeoPoint(latitude: 45.4700, longitude: 9.1781), token: runner.token)
            let hidden = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/live"))
            #expect((hidden["runners"] as? [Any])?.isEmpty == true, "\(hidden)")
            // 2 km from B: beyond the hidden area, which reaches at most about 5.3 × 300 m from the point.
            try await RunFixtures.position(harness, GeoPoint(latitude: 45.4880, longitude: 9.1800), token: runner.token)
            let shown = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/live"))
            #expect((shown["runners"] as? [Any])?.count == 1)
            let removed = try await harness.request(.delete, "/v1/runs/\(run)/participation/privacy-zone", token: runner.token)
            #expect(try harness.object(removed)["privacyZone"] == nil)
        }
    }

    @Test("edit before the start; fewer places than runners 409; another organiser's run 404; cancel mails the runners")
    func editAndCancel() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let rival = try await RunFixtures.organiser(harness, name: "Rival Runs S.r.l.")
            let runner = try await RunFixtures.runner(harness)
            let second = try await RunFixtures.runner(harness, fullName: "Second Runner")
            let run = try await RunFixtures.run(harness, organiser: organiser)
            let place = try await RunFixtures.join(harness, run, token: runner.token)
            _ = try await RunFixtures.join(harness, run, token: second.token)
            let renamed = try await harness.request(.patch, "/v1/runs/\(run)", json: #"{"name":"Sempione 1.3K"}"#, token: organiser)
            #expect(renamed.status == .ok)
            #expect(try harness.object(renamed)["name"] as? String == "Sempione 1.3K")
            let shrink = try await harness.request(.patch, "/v1/runs/\(run)", json: #"{"maxParticipants":1}"#, token: organiser)
            #expect(shrink.status == .conflict)
            #expect(try await harness.request(.patch, "/v1/runs/\(run)", json: #"{"name":"Mine"}"#, token: rival).status == .notFound)
            #expect(try await harness.request(.post, "/v1/runs/\(run)/cancel", token: rival).status == .notFound)

            // Moving the start withdraws the request sent for the old time; a new one is sent.
            let moved = try await harness.request(
                .patch, "/v1/runs/\(run)", json: #"{"startsAt":"\#(Timestamp.rfc3339(Date().addingTimeInterval(1200)))"}"#, token: organiser)
            #expect(moved.status == .ok, "\(harness.text(moved))")
            let oldRequest = try #require(place["requestId"] as? String)
            let old = try harness.object(try await harness.request(.get, "/v1/single-requests/\(oldRequest)", token: runner.token))
            #expect(old["status"] as? String == "cancelled")

            let cancelled = try await harness.request(.post, "/v1/runs/\(run)/cancel", token: organiser)
            #expect(cancelled.status == .ok)
            #expect(try harness.object(cancelled)["state"] as? String == "cancelled")
            #expect(await eventually { try await harness.mails().filter { $0.contains("Subject: Run cancelled: Sempione 1.3K") }.count == 2 })
            #expect(try await harness.request(.post, "/v1/runs/\(run)/cancel", token: organiser).status == .conflict)
            #expect(try await harness.request(.patch, "/v1/runs/\(run)", json: #"{"name":"Again"}"#, token: organiser).status == .conflict)
        }
    }

    @Test("leave before the start frees the place and withdraws the run's request; after the start it is refused")
    func leave() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: { $0.clock = clock.wall }) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser, places: 1)
            let place = try await RunFixtures.join(harness, run, token: runner.token)
            #expect(try await harness.request(.delete, "/v1/runs/\(run)/participation", token: runner.token).status == .noContent)
            let requestID = try #require(place["requestId"] as? String)
            #expect(
                try harness.object(try await harness.request(.get, "/v1/single-requests/\(requestID)", token: runner.token))["status"] as? String
                    == "cancelled")
            #expect(try await harness.request(.delete, "/v1/runs/\(run)/participation", token: runner.token).status == .conflict)
            // A bib is never given twice: the organiser's webhooks (by bib) never mix two people up.
            #expect(try await RunFixtures.join(harness, run, token: runner.token)["bib"] as? Int == 2)
            let impostor = try await RunFixtures.runner(harness, fullName: "Impostor")
            let posing = try await harness.request(
                .post, "/v1/runs/\(run)/participation", json: #"{"displayName":"Bib 1"}"#, token: impostor.token)
            #expect(posing.status == .unprocessableContent)
            #expect(try await items(harness, "/v1/me/runs", token: runner.token).count == 1)
            // The run (ten minutes ahead, an hour long) has started by the server's clock.
            clock.advance(by: .seconds(15 * 60))
            let afterStart = try await harness.request(.delete, "/v1/runs/\(run)/participation", token: runner.token)
            #expect(afterStart.status == .conflict)
        }
    }

    @Test("R50: the public page draws the path and the live runners by public name only; the home page lists the run")
    func spectatorPage() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness, fullName: "Elena Marrone")
            let run = try await RunFixtures.run(harness, organiser: organiser)
            _ = try await RunFixtures.join(harness, run, token: runner.token, displayName: "<b>Elly</b>")
            try await RunFixtures.checkIn(harness, run, token: runner.token)
            try await RunFixtures.start(harness, run)
            try await RunFixtures.position(harness, RunFixtures.b, token: runner.token)
            let page = try await harness.request(.get, "/runs/\(run)")
            #expect(page.status == .ok)
            let html = harness.text(page)
            #expect(html.contains("<polyline class=\"run-path\""))
            #expect(html.contains("data-feed=\"/v1/runs/\(run)/live/events\""))
            #expect(html.contains("&lt;b&gt;Elly&lt;/b&gt;") && !html.contains("<b>Elly</b>"), "a display name is text, never markup")
            for secret in ["Elena Marrone", runner.email] { #expect(!html.contains(secret)) }
            let home = harness.text(try await harness.request(.get, "/login"))
            #expect(home.contains("href=\"/runs/\(run)\""))
            #expect(try await harness.request(.get, "/runs/\(UUID())").status == .notFound)
        }
    }

    @Test("the event stream sends the feed as a positions event, and ends with the run")
    func eventStream() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser)
            #expect(try await harness.request(.post, "/v1/runs/\(run)/cancel", token: organiser).status == .ok)
            let stream = try await harness.request(.get, "/v1/runs/\(run)/live/events")
            #expect(stream.status == .ok)
            #expect(stream.headers[.contentType] == "text/event-stream; charset=utf-8")
            let text = harness.text(stream)
            #expect(text.hasPrefix("event: positions\ndata: {"), "\(text)")
            let data = try #require(text.split(separator: "\n").first { $0.hasPrefix("data: ") }?.dropFirst(6))
            let event = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
            #expect(event["state"] as? String == "cancelled" && (event["runners"] as? [Any])?.isEmpty == true)
            #expect(try await harness.request(.get, "/v1/runs/\(UUID())/live/events").status == .notFound)
        }
    }

    @Test("the organiser's webhook hears of runners joining and leaving by bib, never by identity")
    func organiserWebhooks() async throws {
        try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let registered = try await harness.request(
                .put, "/v1/webhook", json: #"{"url":"http://127.0.0.1:9/hook","secret":"\#(WebhookFixtures.secret)"}"#, token: organiser)
            try #require(registered.status == .ok, "\(harness.text(registered))")
            let runner = try await RunFixtures.runner(harness, fullName: "Franca Oro")
            let run = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 86_400)
            _ = try await RunFixtures.join(harness, run, token: runner.token)
            #expect(try await harness.request(.delete, "/v1/runs/\(run)/participation", token: runner.token).status == .noContent)
            let events = try await harness.sql("SELECT type, data::text FROM webhook_events WHERE request_id = '\(run)' ORDER BY seq")
            let decoded = try events.map { try $0.decode((String, String).self) }
            #expect(decoded.map(\.0) == ["run.runner_joined", "run.runner_left"])
            #expect(decoded.allSatisfy { $0.1.contains(#""bib": "1""#) && $0.1.contains(run) }, "\(decoded)")
            for secret in ["Franca Oro", runner.email] { #expect(!decoded.contains { $0.1.contains(secret) }) }
        }
    }

    @Test("an open spectator stream does not hold a stopping server: the stream ends with the shutdown")
    func streamEndsAtShutdown() async throws {
        let reading = Mutex<Task<Int, any Error>?>(nil)
        let clock = ContinuousClock()
        let stopping = Mutex<ContinuousClock.Instant?>(nil)
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser)
            try await RunFixtures.start(harness, run)
            let url = "http://127.0.0.1:\(harness.port)/v1/runs/\(run)/live/events"
            let (firstEvent, seen) = AsyncStream.makeStream(of: Void.self)
            reading.withLock {
                $0 = Task {
                    try await HTTPClient.withHTTPClient { http in
                        let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
                        var events = 0
                        for try await chunk in response.body where String(buffer: chunk).contains("event: positions") {
                            events += 1
                            seen.yield()
                        }
                        return events
                    }
                }
            }
            var iterator = firstEvent.makeAsyncIterator()
            _ = await iterator.next()
            stopping.withLock { $0 = clock.now }
        }
        // The harness has stopped its server with the stream open; a stream that held it would have failed the
        // run with ServerDidNotStop after 90 s.
        let stopped = try #require(stopping.withLock { $0 })
        #expect(clock.now - stopped < .seconds(30))
        let events = try await #require(reading.withLock { $0 }).value
        #expect(events >= 1)
    }
}
