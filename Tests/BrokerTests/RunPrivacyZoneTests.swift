import AsyncHTTPClient
import BrokerOpenAPI
import Foundation
import Testing

@testable import Broker

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
            try await RunFixtures.start(harness, run, secondsAgo: 3500)
            // The check-in's fix, taken now, is newer than every fix of the walk below (dated since the start):
            // forgotten, so the feed shows the walk.
            _ = try await harness.sql("DELETE FROM positions")

            // One fix a second, as a phone uploads while running; the spectator reads the feed after each.
            var secondsAgo = 3400.0
            var edges: [GeoPoint] = []
            var shown: [GeoPoint] = []
            for street in ZoneAttack.streets(count: 8, around: Self.home, metres: metres, reach: 5.5 * metres, step: 25) {
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
            let zone = PrivacyZone(centre: home, metres: metres, disguise: .draw(using: &random))
            let r = Double(metres)
            let streets = ZoneAttack.streets(count: 16, around: home, metres: r, reach: 5.5 * r, step: r / 40)
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
            let zone = PrivacyZone(centre: home, metres: metres, disguise: .draw(using: &random))
            for step in 0..<72 {
                let edge = home.moved(by: Double(metres), bearing: Double(step) * 5)
                #expect(zone.hides(edge) && zone.hides(home), "a point \(metres) m from the home at \(step * 5)° is shown")
            }
            #expect(zone.hiddenCentre.distance(to: home) > 1.19 * Double(metres))
        }
    }

    @Test("a zone set again at the same place keeps its disguise; another place, or another radius, gets a new one")
    func sameZoneSameDisguise() {
        let first = PrivacyZone(
            centre: Self.home, metres: 200, disguise: .init(bearing: 10, offset: 1.5, margin: 0.2, band: 0.3, phases: [1, 2, 3]))
        let fresh = PrivacyZone.Disguise(bearing: 200, offset: 1.3, margin: 0.1, band: 0.2, phases: [4, 5, 6])
        let nearby = Self.home.moved(by: 15, bearing: 90)
        #expect(PrivacyZone.disguise(for: nearby, metres: 200, earlier: [first], draw: { fresh }) == first.disguise)
        #expect(PrivacyZone.disguise(for: Self.home.moved(by: 450, bearing: 90), metres: 200, earlier: [first], draw: { fresh }) == fresh)
        #expect(PrivacyZone.disguise(for: Self.home, metres: 300, earlier: [first], draw: { fresh }) == fresh)
        #expect(PrivacyZone.disguise(for: Self.home, metres: 200, earlier: [], draw: { fresh }) == fresh)
    }

    @Test("zones set before the disguise existed get one when the schema is migrated, each its own; no zone is stored without one")
    func migrationDisguisesEarlierZones() async throws {
        let bundled = try Migration.bundled()
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                let logger = TestDatabase.logger
                _ = try await Migrator(client: client, migrations: bundled.filter { $0.version < 20 }, logger: logger).migrate()
                let (organiser, run) = (UUID(), UUID())
                let runners = [UUID(), UUID(), UUID()]
                try await client.query(
                    "INSERT INTO accounts (id, role, email) VALUES (\(organiser), 'third_party', 'organiser@example.org')", logger: logger)
                try await client.query(
                    """
                    INSERT INTO runs (id, organiser_id, name, starts_at, duration_minutes, max_participants, path_latitudes, path_longitudes, path_metres)
                    VALUES (\(run), \(organiser), 'Before', now(), 60, 10, '{45.47,45.47}', '{9.17,9.18}', 780)
                    """, logger: logger)
                for (index, runner) in runners.enumerated() {
                    try await client.query(
                        "INSERT INTO accounts (id, role, email) VALUES (\(runner), 'user', \("runner\(index)@example.org"))", logger: logger)
                    let zone = index < 2
                    try await client.query(
                        """
                        INSERT INTO run_participants (run_id, user_id, bib, zone_latitude, zone_longitude, zone_metres)
                        VALUES (\(run), \(runner), \(index + 1), \(zone ? 45.45 : nil), \(zone ? 9.2 : nil), \(zone ? 200 : nil))
                        """, logger: logger)
                }
                _ = try await Migrator(client: client, migrations: bundled, logger: logger).migrate()

                let rows = try await client.query(
                    "SELECT \(unescaped: RunStore.zoneColumns) FROM run_participants p ORDER BY p.bib", logger: logger
                ).collect()
                let zones = try rows.map { try RunStore.zone(from: $0.makeRandomAccess(), at: 0) }
                #expect(zones.count == 3 && zones[2] == nil)
                let disguises = zones.compactMap { $0?.disguise }
                #expect(disguises.count == 2 && disguises[0] != disguises[1], "\(disguises)")
                for disguise in disguises {
                    #expect((0..<360).contains(disguise.bearing) && PrivacyZone.Disguise.offsets.contains(disguise.offset))
                    #expect(PrivacyZone.Disguise.margins.contains(disguise.margin) && PrivacyZone.Disguise.bands.contains(disguise.band))
                    #expect(disguise.phases.count == 3 && disguise.phases.allSatisfy { (0..<360).contains($0) })
                }
                await #expect(throws: (any Error).self, "a zone without its disguise") {
                    try await client.query("UPDATE run_participants SET zone_offset = NULL WHERE bib = 1", logger: logger)
                }
            }
        }
    }
}
