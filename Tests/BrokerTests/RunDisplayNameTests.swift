import BrokerOpenAPI
import Foundation
import Testing

@testable import Broker

/// Display names against the runner who poses as another runner's bib (issue 27): lookalikes of "Bib N" from
/// other scripts, compatibility forms and invisible characters are refused, and spectators see the bib
/// beside every name.
@Suite("Run display names")
struct RunDisplayNameTests {
    /// The issue's five, then more of the same kind: fullwidth and mathematical letters, a capital I and a
    /// lowercase L for the 1, a zero-width space, a bib inside a longer name, and the bib the public name adds.
    static let spoofs = [
        "\u{412}ib 1", "B\u{456}b 1", "\u{392}ib 1", "Bib\u{AD} 1", "Bib \u{2060}1",
        "\u{FF22}\u{FF49}\u{FF42} \u{FF11}", "\u{1D401}\u{1D422}\u{1D41B} \u{1D7CF}", "BIB I", "Bib l", "B\u{200B}ib 1", "bib#1",
        "Laura · Bib 3", "Bi\u{307}b 1", "bib", "Bib 1\u{0661}",
    ]

    @Test("each lookalike of a bib is refused as a display name: 422 naming displayName, and nothing is stored")
    func lookalikesAreRefused() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 86_400)
            let impostor = try await RunFixtures.runner(harness, fullName: "Impostor Runner")
            for spoof in Self.spoofs {
                let response = try await harness.request(
                    .post, "/v1/runs/\(run)/participation", json: Components.Schemas.RunJoining(displayName: spoof).contractJSON,
                    token: impostor.token)
                let escaped = spoof.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
                #expect(response.status == .unprocessableContent, "\(escaped) answered \(response.status)")
                guard response.status == .unprocessableContent else {
                    // Accepted: the impostor leaves, so the next name is tried on its own.
                    _ = try await harness.request(.delete, "/v1/runs/\(run)/participation", token: impostor.token)
                    continue
                }
                #expect(response.headers[.contentType] == "application/problem+json", "\(escaped)")
                let fields = (try harness.object(response)["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
                #expect(fields == ["displayName"], "\(escaped): \(harness.text(response))")
            }
            #expect(try await harness.sql("SELECT 1 FROM run_participants").isEmpty)
        }
    }

    @Test("names in other scripts are welcome; invisible characters are dropped from what is stored; a bidi override cannot reorder the bib")
    func realNamesAreKept() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 86_400)
            for (index, (name, stored)) in [
                ("Дмитрий", "Дмитрий"), ("Ελένη", "Ελένη"), ("Zoë Ibbotson", "Zoë Ibbotson"), ("Bibi 7", "Bibi 7"), ("Bibo", "Bibo"),
                ("\u{202E}3 biB", "3 biB"), ("Ma\u{200B}rco", "Marco"), ("\u{FF2D}ario", "Mario"),
            ].enumerated() {
                let runner = try await RunFixtures.runner(harness, fullName: "Runner \(index)")
                let place = try await RunFixtures.join(harness, run, token: runner.token, displayName: name)
                #expect(place["displayName"] as? String == stored, "\(name) was stored as \(place["displayName"] ?? "nothing")")
            }
        }
    }

    @Test("the bib stands beside every display name: the live feed, its event stream, the results and the run's page")
    func bibBesideEveryName() async throws {
        try await TestHarness.run(configure: RunFixtures.fast) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let named = try await RunFixtures.runner(harness, fullName: "Laura Bianchi")
            let plain = try await RunFixtures.runner(harness, fullName: "Paolo Neri")
            let run = try await RunFixtures.run(harness, organiser: organiser)
            _ = try await RunFixtures.join(harness, run, token: named.token, displayName: "Дмитрий")
            _ = try await RunFixtures.join(harness, run, token: plain.token)
            try await RunFixtures.checkIn(harness, run, token: named.token)
            try await RunFixtures.checkIn(harness, run, token: plain.token)
            try await RunFixtures.start(harness, run, secondsAgo: 600)
            try await RunFixtures.position(harness, RunFixtures.b, secondsAgo: 5, token: named.token)
            try await RunFixtures.position(harness, RunFixtures.a, secondsAgo: 5, token: plain.token)

            let live = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/live"))
            let runners = live["runners"] as? [[String: Any]] ?? []
            #expect(runners.map { $0["name"] as? String } == ["Дмитрий · Bib 1", "Bib 2"], "\(runners)")
            #expect(runners.map { $0["bib"] as? Int } == [1, 2])

            let page = harness.text(try await harness.request(.get, "/runs/\(run)"))
            #expect(page.contains(">Дмитрий · Bib 1</text>"), "the map's marker")

            // The finish, for the results: the middle, then the finish.
            let middle = RunPath(points: [RunFixtures.a, RunFixtures.b, RunFixtures.c]).middle
            try await RunFixtures.position(harness, middle, secondsAgo: 4, token: named.token)
            try await RunFixtures.position(harness, RunFixtures.c, secondsAgo: 3, token: named.token)
            #expect(
                await eventually {
                    let results = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/results"))
                    return (results["items"] as? [[String: Any]])?.first?["name"] as? String == "Дмитрий · Bib 1"
                })
            let finished = harness.text(try await harness.request(.get, "/runs/\(run)"))
            #expect(finished.contains("<td>Дмитрий · Bib 1</td>"), "the results table")
        }
    }
}
