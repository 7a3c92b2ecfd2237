import BrokerOpenAPI
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

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
        // Digits of other scripts and other numerals (Arabic, Persian, Devanagari, Thai, Roman, superscript).
        "Bib \u{667}", "Bib \u{661}\u{665}", "Bib \u{662}\u{667}", "Bib 1\u{966}", "Bib 5\u{E50}", "Laura · Bib \u{667}", "Bib \u{6F7}",
        "Bib \u{6F5}", "Bib \u{2160}", "Bib \u{2077}", "Bib \u{4E03}",
        // Spacing and ordering: the bib spelled apart, a letter that looks like a dot, modifier letters, a letter of
        // a right-to-left script or a tatweel that display order moves away, lookalikes of b the table lacks.
        "B i b 7", "B.i.b 7", "Bi b 7", "Bib\u{A78F}7", "Bib 7\u{A78F}", "Bib 7\u{2BC}", "\u{2BC}Bib 7", "Bib \u{5D0}7", "Bib \u{640}7",
        "\u{299}ib 7", "\u{432}ib 7", "\u{1F171}ib 7", "Bib\u{A78F}l", "Laura Bib", "\u{202E}3 biB", "HABIB 7", "Bib |",
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
                ("\u{202E}arual", "arual"), ("Ma\u{200B}rco", "Marco"), ("\u{FF2D}ario", "Mario"),
                // A letter joined to "Bib" is a name, not a digit; "bib" inside a word is not a bib.
                ("Bibl", "Bibl"), ("Bibiana 7", "Bibiana 7"), ("Habib 7", "Habib 7"), ("Habib Omar", "Habib Omar"), ("Bib Laura", "Bib Laura"),
                // Joiners spell: an emoji sequence, a Persian name; a bidi control at the end is dropped.
                ("\u{1F469}\u{200D}\u{1F4BB} Ana", "\u{1F469}\u{200D}\u{1F4BB} Ana"),
                ("\u{639}\u{644}\u{6CC}\u{200C}\u{631}\u{636}\u{627}", "\u{639}\u{644}\u{6CC}\u{200C}\u{631}\u{636}\u{627}"),
                ("Laura\u{202E}", "Laura"), ("\u{2764}\u{FE0F} Sara", "\u{2764}\u{FE0F} Sara"),
            ].enumerated() {
                let runner = try await RunFixtures.runner(harness, fullName: "Runner \(index)")
                let place = try await RunFixtures.join(harness, run, token: runner.token, displayName: name)
                let escaped = name.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
                #expect(
                    (place["displayName"] as? String)?.unicodeScalars.elementsEqual(stored.unicodeScalars) == true, "\(escaped) was stored otherwise")
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
            #expect(runners.map { $0["name"] as? String } == ["\u{2068}Дмитрий\u{2069} · Bib 1", "Bib 2"], "\(runners)")
            #expect(runners.map { $0["bib"] as? Int } == [1, 2])

            let page = harness.text(try await harness.request(.get, "/runs/\(run)"))
            #expect(page.contains(">\u{2068}Дмитрий\u{2069} · Bib 1</text>"), "the map's marker")

            // The finish, for the results: the middle, then the finish.
            let middle = RunPath(points: [RunFixtures.a, RunFixtures.b, RunFixtures.c]).middle
            try await RunFixtures.position(harness, middle, secondsAgo: 4, token: named.token)
            try await RunFixtures.position(harness, RunFixtures.c, secondsAgo: 3, token: named.token)
            #expect(
                await eventually {
                    let results = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/results"))
                    return (results["items"] as? [[String: Any]])?.first?["name"] as? String == "\u{2068}Дмитрий\u{2069} · Bib 1"
                })
            let finished = harness.text(try await harness.request(.get, "/runs/\(run)"))
            #expect(finished.contains("<td>\u{2068}Дмитрий\u{2069} · Bib 1</td>"), "the results table")
        }
    }

    @Test("a name is counted as the database counts it: 40 flags are 80 code points, refused with 422 and not a 500")
    func lengthInCodePoints() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser, startingIn: 3 * 86_400)
            let runner = try await RunFixtures.runner(harness)
            let italy = "\u{1F1EE}\u{1F1F9}"
            let response = try await harness.request(
                .post, "/v1/runs/\(run)/participation",
                json: Components.Schemas.RunJoining(displayName: String(repeating: italy, count: 40)).contractJSON, token: runner.token)
            #expect(response.status == .unprocessableContent, "\(response.status): \(harness.text(response))")
            #expect(try await harness.sql("SELECT 1 FROM run_participants").isEmpty)
            let place = try await RunFixtures.join(harness, run, token: runner.token, displayName: String(repeating: italy, count: 20))
            #expect(place["displayName"] as? String == String(repeating: italy, count: 20))
        }
    }

    @Test("no name's bidi reaches the bib beside it: the name is isolated (U+2068 … U+2069)")
    func nameIsIsolatedFromTheBib() {
        #expect(RunParticipant.publicName(bib: 12, displayName: "Laura\u{202E}") == "\u{2068}Laura\u{202E}\u{2069} · Bib 12")
        #expect(RunParticipant.publicName(bib: 12, displayName: nil) == "Bib 12")
    }

    @Test("names stored before are cleaned when the schema is migrated: NFKC, no bidi controls or invisible separators, joiners kept")
    func migrationCleansStoredNames() async throws {
        let bundled = try Migration.bundled()
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                let logger = TestDatabase.logger
                _ = try await Migrator(client: client, migrations: bundled.filter { $0.version < 22 }, logger: logger).migrate()
                let (organiser, run) = (UUID(), UUID())
                try await client.query(
                    "INSERT INTO accounts (id, role, email) VALUES (\(organiser), 'third_party', 'organiser@example.org')", logger: logger)
                try await client.query(
                    """
                    INSERT INTO runs (id, organiser_id, name, starts_at, duration_minutes, max_participants, path_latitudes, path_longitudes, path_metres)
                    VALUES (\(run), \(organiser), 'Before', now(), 60, 10, '{45.47,45.47}', '{9.17,9.18}', 780)
                    """, logger: logger)
                let names: [(old: String?, new: String?)] = [
                    ("Laura\u{202E}", "Laura"), ("\u{FF2D}a\u{AD}rio", "Mario"), ("\u{2067}Ana\u{2069} ", "Ana"),
                    ("\u{1F469}\u{200D}\u{1F4BB} Ana", "\u{1F469}\u{200D}\u{1F4BB} Ana"),
                    ("\u{639}\u{644}\u{6CC}\u{200C}\u{631}\u{636}\u{627}", "\u{639}\u{644}\u{6CC}\u{200C}\u{631}\u{636}\u{627}"),
                    ("\u{202E}\u{FEFF}", nil), (nil, nil),
                ]
                for (index, name) in names.enumerated() {
                    let runner = UUID()
                    try await client.query(
                        "INSERT INTO accounts (id, role, email) VALUES (\(runner), 'user', \("runner\(index)@example.org"))", logger: logger)
                    try await client.query(
                        "INSERT INTO run_participants (run_id, user_id, bib, display_name) VALUES (\(run), \(runner), \(index + 1), \(name.old))",
                        logger: logger)
                }
                _ = try await Migrator(client: client, migrations: bundled, logger: logger).migrate()
                let stored = try await client.query("SELECT display_name FROM run_participants ORDER BY bib", logger: logger).collect()
                    .map { try $0.decode(String?.self) }
                #expect(stored.count == names.count)
                for (name, now) in zip(names, stored) {
                    #expect(
                        now?.unicodeScalars.map(\.value) == name.new?.unicodeScalars.map(\.value),
                        "\(String(describing: name.old?.unicodeScalars.map(\.value)))")
                }
            }
        }
    }
}
