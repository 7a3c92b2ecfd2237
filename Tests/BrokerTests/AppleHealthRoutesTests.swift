import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// An iPhone's export.zip holds each workout's GPS track in `workout-routes/route_….gpx` (issue 19): imported
/// as positions, in the import's transaction, all or nothing.
@Suite("Apple Health workout routes")
struct AppleHealthRoutesTests {
    /// A route as the Health app writes it: GPX 1.1, a track of one segment, elevation, time and `hAcc`.
    static func route(startingAt minute: Int, points: Int = 3) -> [UInt8] {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
             <metadata><time>2026-05-02T07:00:00Z</time></metadata>
             <trk><name>Route 2026-05-01 9:00am</name><trkseg>

            """
        for index in 0..<points {
            text += """
                <trkpt lon="\(9.17 + Double(index) * 0.0001)" lat="\(45.47 + Double(index) * 0.0001)"><ele>121.5</ele>\
                <time>2026-05-01T07:\(String(format: "%02d", minute)):\(String(format: "%02d", index))Z</time>\
                <extensions><speed>2.9</speed><course>41.2</course><hAcc>4.1</hAcc><vAcc>3.2</vAcc></extensions></trkpt>

                """
        }
        return Array((text + "</trkseg></trk>\n</gpx>\n").utf8)
    }

    static func export(routes: [(String, [UInt8])]) -> [UInt8] {
        AppleHealthFixtures.zip(
            [
                .init(path: "apple_health_export/export_cda.xml", data: Array("<ClinicalDocument/>".utf8)),
                .init(path: "apple_health_export/export.xml", data: AppleHealthFixtures.exportXML),
            ] + routes.map { .init(path: "apple_health_export/workout-routes/\($0.0)", data: $0.1) })
    }

    @Test("routes become positions beside the samples, with elevation and accuracy; importing again stores nothing twice")
    func routesAreImported() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let zip = Self.export(routes: [
                ("route_2026-05-01_9.00am.gpx", Self.route(startingAt: 0)), ("route_2026-05-01_9.30am.gpx", Self.route(startingAt: 30)),
            ])
            let response = try await AppleHealthFixtures.post(harness, zip, contentType: "application/zip", token: token)
            #expect(response.status == .ok, "\(harness.text(response))")
            let body = try harness.object(response)
            #expect(body["stored"] as? Int == AppleHealthFixtures.expectedSamples.count)
            let routes = try #require(body["routes"] as? [String: Any])
            #expect(routes["files"] as? Int == 2 && routes["stored"] as? Int == 6 && routes["alreadyThere"] as? Int == 0, "\(routes)")
            let listed = try harness.object(try await harness.request(.get, "/v1/me/positions", token: token))["items"] as? [[String: Any]] ?? []
            #expect(listed.count == 6)
            #expect(listed.first?["at"] as? String == "2026-05-01T07:00:00Z")
            #expect(listed.first?["elevation"] as? Double == 121.5 && listed.first?["accuracy"] as? Double == 4.1)

            let again = try await AppleHealthFixtures.post(harness, zip, contentType: "application/zip", token: token)
            let second = try #require(try harness.object(again)["routes"] as? [String: Any])
            #expect(second["stored"] as? Int == 0 && second["alreadyThere"] as? Int == 6, "\(second)")
        }
    }

    @Test("a route that cannot be read refuses the whole import, naming the file and the line; nothing is stored")
    func badRouteRefusesAll() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            var broken = Self.route(startingAt: 0)
            broken = Array(String(decoding: broken, as: UTF8.self).replacingOccurrences(of: #"lat="45.4701""#, with: #"lat="north""#).utf8)
            let zip = Self.export(routes: [("route_a.gpx", Self.route(startingAt: 10)), ("route_b.gpx", broken)])
            let response = try await AppleHealthFixtures.post(harness, zip, contentType: "application/zip", token: token)
            #expect(response.status == .unprocessableContent)
            let detail = try #require(try harness.object(response)["detail"] as? String)
            #expect(detail.contains("workout-routes/route_b.gpx") && detail.contains("line "), "\(detail)")
            #expect(try await AppleHealthFixtures.storedSamples(harness) == 0)
            #expect(try await harness.sql("SELECT 1 FROM positions").isEmpty)
        }
    }

    @Test("a route in UTF-16 whose coordinates come from an entity refuses the import, naming the file and the encoding")
    func utf16RouteWithEntityIsRefused() async throws {
        // Accepted before issue 27 (item 5): libxml2 decoded the UTF-16 and expanded the entity into the points.
        let text = String(decoding: Self.route(startingAt: 0), as: UTF8.self)
            .replacingOccurrences(of: #"encoding="UTF-8"?>"#, with: #"encoding="UTF-16"?>"# + "\n" + #"<!DOCTYPE gpx [<!ENTITY lat "45.4">]>"#)
            .replacingOccurrences(of: #"lat="45.4701""#, with: #"lat="&lat;""#)
        let utf16: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let zip = Self.export(routes: [("route_a.gpx", Self.route(startingAt: 10)), ("route_b.gpx", utf16)])
            let response = try await AppleHealthFixtures.post(harness, zip, contentType: "application/zip", token: token)
            #expect(response.status == .unprocessableContent, "\(harness.text(response))")
            let detail = try #require(try harness.object(response)["detail"] as? String)
            #expect(detail.contains("workout-routes/route_b.gpx") && detail.contains("UTF-16"), "\(detail)")
            #expect(try await AppleHealthFixtures.storedSamples(harness) == 0)
            #expect(try await harness.sql("SELECT 1 FROM positions").isEmpty)
        }
    }

    @Test("an export.xml alone has no routes; a zip without a routes folder reports none read")
    func noRoutes() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let xml = try await AppleHealthFixtures.post(harness, AppleHealthFixtures.exportXML, contentType: "application/xml", token: token)
            #expect(try harness.object(xml)["routes"] == nil)
            let other = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            let zip = try await AppleHealthFixtures.post(harness, Self.export(routes: []), contentType: "application/zip", token: other)
            #expect((try harness.object(zip)["routes"] as? [String: Any])?["files"] as? Int == 0)
        }
    }
}
