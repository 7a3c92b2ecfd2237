import AsyncHTTPClient
import BrokerOpenAPI
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// A runner's privacy zone against the spectator who looks for their home (issue 27): the known attack on
/// Strava's zones, a circle fitted through the points where the runner vanishes and reappears.
@Suite("Run privacy zones")
struct RunPrivacyZoneTests {
    /// Where the runner lives: away from the run's path (its finish is never reached), which does not matter
    /// to the feed: it shows where a runner is, on the path or not.
    static let home = GeoPoint(latitude: 45.4500, longitude: 9.2000)

    @Test(
        "the attack through the API: a spectator polling the live feed while the runner crosses their 200 m zone on 8 streets misses the home by more than 200 m"
    )
    func attackThroughTheFeed() async throws {
        try await TestHarness.run(configure: { $0.rateLimits.uploads = nil }) { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let run = try await RunFixtures.run(harness, organiser: organiser)
            _ = try await RunFixtures.join(harness, run, token: runner.token)
            try await RunFixtures.checkIn(harness, run, token: runner.token)
            let metres = 200.0
            let zone = try await harness.request(
                .put, "/v1/runs/\(run)/participation/privacy-zone",
                json: #"{"latitude":\#(Self.home.latitude),"longitude":\#(Self.home.longitude),"metres":\#(Int(metres))}"#, token: runner.token)
            try #require(zone.status == .ok, "\(harness.text(zone))")
            // Started twenty minutes ago (the walk has about 600 fixes, a second apart): the hour-long run stays live
            // however slowly a loaded machine walks (started 3,500 s ago, it ended mid-walk once, at over 100 s).
            try await RunFixtures.start(harness, run, secondsAgo: 1200)
            // The check-in's fix, taken now, is newer than every fix of the walk below (dated since the start):
            // forgotten, so the feed shows the walk.
            _ = try await harness.sql("DELETE FROM positions")

            // One fix a second, as a phone uploads while running; the spectator reads the feed after each.
            var secondsAgo = 1190.0
            var edges: [GeoPoint] = []
            var shown: [GeoPoint] = []
            // Streets long enough to leave the hidden area (up to 2.7 + 4 + 0.4 radii from the home) on both sides.
            for street in ZoneAttack.streets(count: 8, around: Self.home, metres: metres, reach: 7.5 * metres, step: 40) {
                var seen: [GeoPoint?] = []
                for point in street {
                    try await RunFixtures.position(harness, point, secondsAgo: secondsAgo, token: runner.token)
                    secondsAgo -= 1
                    let live = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/live"))
                    let runners = live["runners"] as? [[String: Any]] ?? []
                    let position = runners.first.flatMap { runner -> GeoPoint? in
                        guard let latitude = runner["latitude"] as? Double, let longitude = runner["longitude"] as? Double else { return nil }
                        return GeoPoint(latitude: latitude, longitude: longitude)
                    }
                    seen.append(position)
                    if let position { shown.append(position) }
                }
                edges += ZoneAttack.edges(of: seen)
            }
            #expect(edges.count >= 16, "every street crosses the zone: \(edges.count) edges")
            let nearest = shown.map { $0.distance(to: Self.home) }.min() ?? .infinity
            #expect(nearest > metres, "a position \(nearest) m from the home was shown")
            let centre = try #require(ZoneAttack.fittedCentre(edges, origin: Self.home))
            let miss = centre.distance(to: Self.home)
            #expect(miss > metres, "the fitted centre is \(miss) m from the home")

            // At home: hidden from every view of the feed, the run's page and its event stream alike.
            try await RunFixtures.position(harness, Self.home, secondsAgo: secondsAgo, token: runner.token)
            let live = try harness.object(try await harness.request(.get, "/v1/runs/\(run)/live"))
            #expect((live["runners"] as? [Any])?.isEmpty == true, "\(live)")
            let page = harness.text(try await harness.request(.get, "/runs/\(run)"))
            #expect(page.contains("<g id=\"runners\">") && !page.contains("data-bib=\"1\""))
            let event = try await Self.firstEvent(harness, run: run)
            #expect(event["state"] as? String == "live" && (event["runners"] as? [Any])?.isEmpty == true, "\(event)")
        }
    }

    /// The first `positions` event of the run's stream, as a spectator's browser reads it; the stream is
    /// dropped after it.
    static func firstEvent(_ harness: TestHarness, run: String) async throws -> [String: Any] {
        try await HTTPClient.withHTTPClient { http in
            let url = "http://127.0.0.1:\(harness.port)/v1/runs/\(run)/live/events"
            let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            var text = ""
            for try await chunk in response.body {
                text += String(buffer: chunk)
                guard let end = text.range(of: "\n\n") else { continue }
                let data = text[..<end.lowerBound].split(separator: "\n").first { $0.hasPrefix("data: ") }?.dropFirst(6) ?? ""
                return try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] ?? [:]
            }
            return [:]
        }
    }

    /// The walk of `ZoneAttack.streets` as the feed shows it: each point, or nil where `hides` hides it.
    static func crossings(_ streets: [[GeoPoint]], hides: (GeoPoint) -> Bool) -> (edges: [GeoPoint], shown: [GeoPoint]) {
        var edges: [GeoPoint] = []
        var shown: [GeoPoint] = []
        for street in streets {
            let seen = street.map { hides($0) ? nil : $0 }
            edges += ZoneAttack.edges(of: seen)
            shown += seen.compactMap { $0 }
        }
        return (edges, shown)
    }

    @Test("the attack works on a zone cut at its radius around the point, as zones were: the fit lands within 8 m")
    func attackOnAPlainZone() {
        let metres = 200.0
        let streets = ZoneAttack.streets(count: 24, around: Self.home, metres: metres, reach: 2 * metres, step: 5)
        let (edges, _) = Self.crossings(streets) { $0.distance(to: Self.home) <= metres }
        let centre = ZoneAttack.fittedCentre(edges, origin: Self.home)
        #expect(centre.map { $0.distance(to: Self.home) < 8 } == true, "\(centre.map { $0.distance(to: Self.home) } ?? .infinity) m")
    }

    @Test(
        "the attack on 200 disguised zones (100–1000 m, anywhere), 16 streets each, a fix every 40th of the radius: every fit misses the point by more than the radius; nothing within it is ever shown; the edges draw no circle"
    )
    func attackOnDisguisedZones() {
        var random = SeededRandom(seed: 27)
        var closest = Double.infinity
        for _ in 0..<200 {
            let home = GeoPoint(latitude: Double.random(in: -60...60, using: &random), longitude: Double.random(in: -179...179, using: &random))
            let metres = Int.random(in: PrivacyZone.metresRange, using: &random)
            let zone = PrivacyZone(centre: home, metres: metres, disguise: .draw(home: home, metres: metres, using: &random))
            let r = Double(metres)
            let streets = ZoneAttack.streets(count: 16, around: home, metres: r, reach: 7.5 * r, step: r / 40)
            let (edges, shown) = Self.crossings(streets, hides: zone.hides)
            let nearest = shown.map { $0.distance(to: home) }.min() ?? .infinity
            #expect(nearest > r, "a point \(nearest) m from the home of a \(metres) m zone was shown")
            guard let centre = ZoneAttack.fittedCentre(edges, origin: home) else {
                Issue.record("no circle fitted through \(edges.count) edges")
                continue
            }
            let miss = centre.distance(to: home)
            closest = min(closest, miss / r)
            #expect(miss > r, "the fit is \(miss) m from the home of a \(metres) m zone (\(zone.disguise))")
            // The edges are not on one circle: their distances from the fitted centre spread over the band.
            let radii = edges.map { $0.distance(to: centre) }
            #expect((radii.max() ?? 0) - (radii.min() ?? 0) > 0.05 * r, "the edges of a \(metres) m zone lie on one circle")
        }
        #expect(closest > 1.05, "the closest fit was \(closest) radii from its home")
    }

    @Test("everything within the radius is hidden in every direction, at any latitude, for every disguise")
    func pointAlwaysCovered() {
        var random = SeededRandom(seed: 2027)
        for _ in 0..<2000 {
            let home = GeoPoint(latitude: Double.random(in: -80...80, using: &random), longitude: Double.random(in: -180...180, using: &random))
            let metres = Int.random(in: PrivacyZone.metresRange, using: &random)
            let zone = PrivacyZone(centre: home, metres: metres, disguise: .draw(home: home, metres: metres, using: &random))
            for step in 0..<72 {
                let edge = home.moved(by: Double(metres), bearing: Double(step) * 5)
                #expect(zone.hides(edge) && zone.hides(home), "a point \(metres) m from the home at \(step * 5)° is shown")
            }
            let offset = zone.hiddenCentre.distance(to: home) / Double(metres)
            #expect(offset > 1.19 && offset < 2.71, "the hidden centre is \(offset) radii from the home")
            // Grown for a larger zone at the same home: still everything within its radius.
            let larger = min(metres * 3, 1000)
            let point = home.moved(by: Double(metres) / 2, bearing: Double.random(in: 0..<360, using: &random))
            let grown = PrivacyZone(
                centre: point, metres: larger,
                disguise: PrivacyZone.disguise(for: point, metres: larger, earlier: [zone.disguise]) {
                    Issue.record("drawn again")
                    return zone.disguise
                })
            #expect(grown.hiddenCentre == zone.hiddenCentre)
            for step in 0..<72 {
                #expect(grown.hides(point.moved(by: Double(larger), bearing: Double(step) * 5)), "a grown zone shows its edge at \(step * 5)°")
            }
        }
    }

    @Test(
        "a spectator who knows the rule and fits the hidden circle (centre, radius, so the zone's radius too) must still look for the home in an area of at least 4 zones: the home is anywhere in an annulus around the centre, uniformly by area"
    )
    func candidateArea() {
        var random = SeededRandom(seed: 4242)
        let metres = 200
        let r = Double(metres)
        // What the spectator learns from the hidden circle: its centre, its radius, and from them (the rule's
        // ratio) the zone's radius; where the home can be, by the rule, is the annulus around the centre.
        let (inner, outer) = (PrivacyZone.Disguise.nearest * r, PrivacyZone.Disguise.radiusRatio * r - PrivacyZone.Disguise.margin * r)
        #expect(PrivacyZone.Disguise.candidateArea(metres: metres) >= 4 * Double.pi * r * r)
        #expect(abs(PrivacyZone.Disguise.candidateArea(metres: metres) - Double.pi * (outer * outer - inner * inner)) < 1)
        // The draws fill that annulus evenly: the home at the same distance range from the centre, and as
        // often in each of its ten rings of equal area, so nothing narrows it within.
        var rings = [Int](repeating: 0, count: 10)
        var bearings = [Int](repeating: 0, count: 4)
        let draws = 20000
        for _ in 0..<draws {
            let disguise = PrivacyZone.Disguise.draw(home: Self.home, metres: metres, using: &random)
            #expect(abs(disguise.radius - PrivacyZone.Disguise.radiusRatio * r) < 1e-9, "the hidden radius tells more than the zone's radius")
            let distance = disguise.centre.distance(to: Self.home)
            try? #require(distance >= inner - 0.01 && distance <= outer + 0.01, "the home is \(distance) m from the centre")
            let share = (distance * distance - inner * inner) / (outer * outer - inner * inner)
            rings[min(9, max(0, Int(share * 10)))] += 1
            bearings[min(3, Int(Self.home.bearing(to: disguise.centre) / 90))] += 1
        }
        let expected = Double(draws) / 10
        #expect(rings.allSatisfy { abs(Double($0) - expected) < 0.1 * expected }, "\(rings)")
        #expect(bearings.allSatisfy { abs(Double($0) - Double(draws) / 4) < 0.05 * Double(draws) / 4 }, "\(bearings)")
    }

    @Test("a zone near a disguise's home takes that disguise, grown only if it must; another place gets a new one")
    func sameHomeSameDisguise() {
        var random = SeededRandom(seed: 7)
        let first = PrivacyZone.Disguise.draw(home: Self.home, metres: 200, using: &random)
        let fresh = PrivacyZone.Disguise.draw(home: Self.home.moved(by: 5000, bearing: 0), metres: 200, using: &random)
        let nearby = Self.home.moved(by: 15, bearing: 90)
        #expect(PrivacyZone.disguise(for: nearby, metres: 200, earlier: [first], draw: { fresh }) == first)
        #expect(PrivacyZone.disguise(for: Self.home.moved(by: 450, bearing: 90), metres: 200, earlier: [first], draw: { fresh }) == fresh)
        #expect(PrivacyZone.disguise(for: Self.home, metres: 200, earlier: [], draw: { fresh }) == fresh)
        // A larger zone at the same home: the same centre, the radius grown just enough, never shrunk.
        let larger = PrivacyZone.disguise(for: Self.home, metres: 600, earlier: [first], draw: { fresh })
        #expect(larger.centre == first.centre && larger.band == first.band && larger.phases == first.phases)
        #expect(abs(larger.radius - max(first.radius, first.centre.distance(to: Self.home) + 1.3 * 600)) < 1e-9)
        #expect(PrivacyZone.disguise(for: Self.home, metres: 100, earlier: [larger], draw: { fresh }).radius == larger.radius)
    }

    /// The runner's hidden centre in the run, read as the feed reads it.
    static func hiddenCentre(_ harness: TestHarness, run: String, email: String) async throws -> GeoPoint? {
        let user = try #require(try await harness.sql("SELECT id FROM accounts WHERE email = '\(email)'").first).decode(UUID.self)
        return try await TestDatabase.withClient(harness.databaseURL) { client in
            try await client.withConnection { connection in
                try await RunStore.participant(run: UUID(uuidString: run)!, user: user, on: connection, logger: TestDatabase.logger)
            }
        }?.privacyZone?.hiddenCentre
    }

    static func setZone(_ harness: TestHarness, run: String, at point: GeoPoint, metres: Int, token: String) async throws {
        let response = try await harness.request(
            .put, "/v1/runs/\(run)/participation/privacy-zone",
            json: #"{"latitude":\#(point.latitude),"longitude":\#(point.longitude),"metres":\#(metres)}"#, token: token)
        try #require(response.status == .ok, "\(harness.text(response))")
    }

    @Test(
        "one hidden centre per home: the zone removed and set again, set with another radius, after leaving and rejoining, in another run, and in two runs at once"
    )
    func oneDisguisePerHome() async throws {
        try await TestHarness.run { harness in
            let organiser = try await RunFixtures.organiser(harness)
            let runner = try await RunFixtures.runner(harness)
            let (first, second) = (try await RunFixtures.run(harness, organiser: organiser), try await RunFixtures.run(harness, organiser: organiser))
            _ = try await RunFixtures.join(harness, first, token: runner.token)
            _ = try await RunFixtures.join(harness, second, token: runner.token)
            try await Self.setZone(harness, run: first, at: Self.home, metres: 200, token: runner.token)
            let centre = try #require(try await Self.hiddenCentre(harness, run: first, email: runner.email))

            // Removed, then set again a few metres off.
            let removed = try await harness.request(.delete, "/v1/runs/\(first)/participation/privacy-zone", token: runner.token)
            try #require(removed.status == .ok, "\(harness.text(removed))")
            try await Self.setZone(harness, run: first, at: Self.home.moved(by: 20, bearing: 45), metres: 200, token: runner.token)
            #expect(try await Self.hiddenCentre(harness, run: first, email: runner.email) == centre, "removed and set again")
            // Another radius.
            try await Self.setZone(harness, run: first, at: Self.home, metres: 350, token: runner.token)
            #expect(try await Self.hiddenCentre(harness, run: first, email: runner.email) == centre, "another radius")
            // Another run.
            try await Self.setZone(harness, run: second, at: Self.home, metres: 150, token: runner.token)
            #expect(try await Self.hiddenCentre(harness, run: second, email: runner.email) == centre, "another run")
            // Left (the participation and its zone deleted) and joined again: the disguise stays with the person.
            let left = try await harness.request(.delete, "/v1/runs/\(first)/participation", token: runner.token)
            try #require(left.status == .ok || left.status == .noContent, "\(harness.text(left))")
            _ = try await RunFixtures.join(harness, first, token: runner.token)
            try await Self.setZone(harness, run: first, at: Self.home, metres: 200, token: runner.token)
            #expect(try await Self.hiddenCentre(harness, run: first, email: runner.email) == centre, "left and joined again")

            // Another runner sets one home in two runs at once: the saves serialise on the person.
            let other = try await RunFixtures.runner(harness, fullName: "Marco Neri")
            _ = try await RunFixtures.join(harness, first, token: other.token)
            _ = try await RunFixtures.join(harness, second, token: other.token)
            async let one: Void = Self.setZone(harness, run: first, at: Self.home, metres: 200, token: other.token)
            async let two: Void = Self.setZone(harness, run: second, at: Self.home, metres: 200, token: other.token)
            _ = try await (one, two)
            let (a, b) = (
                try await Self.hiddenCentre(harness, run: first, email: other.email),
                try await Self.hiddenCentre(harness, run: second, email: other.email)
            )
            #expect(a != nil && a == b, "set in two runs at once")
        }
    }

    @Test(
        "zones set before the disguise existed get one when the schema is migrated: one per person and point, shared by their runs; no zone is stored without one"
    )
    func migrationDisguisesEarlierZones() async throws {
        let bundled = try Migration.bundled()
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                let logger = TestDatabase.logger
                _ = try await Migrator(client: client, migrations: bundled.filter { $0.version < 20 }, logger: logger).migrate()
                let organiser = UUID()
                let (runs, runners) = ([UUID(), UUID()], [UUID(), UUID(), UUID()])
                try await client.query(
                    "INSERT INTO accounts (id, role, email) VALUES (\(organiser), 'third_party', 'organiser@example.org')", logger: logger)
                for run in runs {
                    try await client.query(
                        """
                        INSERT INTO runs (id, organiser_id, name, starts_at, duration_minutes, max_participants, path_latitudes, path_longitudes, path_metres)
                        VALUES (\(run), \(organiser), 'Before', now(), 60, 10, '{45.47,45.47}', '{9.17,9.18}', 780)
                        """, logger: logger)
                }
                for (index, runner) in runners.enumerated() {
                    try await client.query(
                        "INSERT INTO accounts (id, role, email) VALUES (\(runner), 'user', \("runner\(index)@example.org"))", logger: logger)
                    // Runners 0 and 1 at the same point (both their runs), runner 2 without a zone.
                    for (number, run) in runs.enumerated() {
                        let zone = index < 2
                        try await client.query(
                            """
                            INSERT INTO run_participants (run_id, user_id, bib, zone_latitude, zone_longitude, zone_metres)
                            VALUES (\(run), \(runner), \(index + 1), \(zone ? 45.45 : nil), \(zone ? 9.2 : nil), \(zone ? 200 + 100 * number : nil))
                            """, logger: logger)
                    }
                }
                _ = try await Migrator(client: client, migrations: bundled, logger: logger).migrate()

                let rows = try await client.query(
                    "SELECT \(unescaped: RunStore.zoneColumns) FROM run_participants p \(unescaped: RunStore.zoneJoin) ORDER BY p.user_id = \(runners[0]) DESC, p.user_id = \(runners[1]) DESC, p.run_id = \(runs[0]) DESC",
                    logger: logger
                ).collect()
                let zones = try rows.map { try RunStore.zone(from: $0.makeRandomAccess(), at: 0) }
                #expect(zones.count == 6 && zones[4] == nil && zones[5] == nil)
                let disguises = zones.compactMap { $0?.disguise }
                #expect(disguises.count == 4 && disguises[0] == disguises[1] && disguises[2] == disguises[3], "one per person and point")
                #expect(disguises[0] != disguises[2], "\(disguises)")
                #expect(try await client.query("SELECT count(*) FROM privacy_zone_disguises", logger: logger).collect().first?.decode(Int.self) == 2)
                let home = GeoPoint(latitude: 45.45, longitude: 9.2)
                for disguise in disguises {
                    // Drawn by the rule for the largest radius at the point (300 m), on `GeoPoint`'s sphere.
                    let offset = disguise.centre.distance(to: home) / 300
                    #expect(offset > 1.2 - 1e-6 && offset < 2.7 + 1e-6 && disguise.radius == 1200 && disguise.metres == 300, "\(disguise)")
                    #expect(PrivacyZone.Disguise.bands.contains(disguise.band / 300))
                    #expect(disguise.phases.count == 3 && disguise.phases.allSatisfy { (0..<360).contains($0) })
                }
                for zone in zones.compactMap({ $0 }) {
                    for step in 0..<36 { #expect(zone.hides(home.moved(by: Double(zone.metres), bearing: Double(step) * 10))) }
                }
                await #expect(throws: (any Error).self, "a zone without its disguise") {
                    try await client.query("UPDATE run_participants SET zone_disguise_id = NULL WHERE bib = 1", logger: logger)
                }
            }
        }
    }
}
