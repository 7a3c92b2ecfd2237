import BrokerOpenAPI
import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `position` as a type of single requests (issue 19): asked for, accepted, downloaded as JSON, CSV or GPX
/// by its own cursor, recorded in the access log, announced to subscribers, and never released otherwise.
@Suite("Positions in single requests")
struct PositionRequestTests {
    private static let cursorHeader = HTTPField.Name("Data4Help-Next-Cursor")!

    private func uploadPositions(_ harness: TestHarness, _ positions: [Components.Schemas.PositionInput], token: String) async throws {
        let response = try await harness.request(
            .post, "/v1/me/positions", json: Components.Schemas.PositionUpload(positions: positions).contractJSON, token: token)
        try #require(response.status == .ok, "upload answered \(response.status): \(harness.text(response))")
    }

    private func positions(_ harness: TestHarness, _ id: String, cursor: String? = nil, token: String) async throws
        -> (times: [String], nextCursor: String)
    {
        let query = cursor.map { "?cursor=\($0)" } ?? ""
        let response = try await harness.request(.get, "/v1/single-requests/\(id)/positions\(query)", token: token)
        try #require(response.status == .ok, "positions answered \(response.status): \(harness.text(response))")
        let body = try harness.object(response)
        let next = try #require(body["nextCursor"] as? String)
        #expect(response.headers[Self.cursorHeader] == next)
        return ((body["items"] as? [[String: Any]] ?? []).compactMap { $0["at"] as? String }, next)
    }

    private static let track: [Components.Schemas.PositionInput] = [
        .init(at: "2026-05-01T07:00:00Z", latitude: 45.4719, longitude: 9.1749, elevation: 122.5, accuracy: 4),
        .init(at: "2026-05-01T07:00:05.5Z", latitude: 45.4725, longitude: 9.1755),
        .init(at: "2026-05-02T07:00:00Z", latitude: 45.48, longitude: 9.18),
    ]

    @Test("a request asks for position beside sample types; an unknown type is refused by name")
    func askForPosition() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let created = try await harness.sendRequest(parties, types: ["heart_rate", "position"])
            #expect(created.status == .created, "\(harness.text(created))")
            #expect(try harness.object(created)["types"] as? [String] == ["heart_rate", "position"])
            let id = try #require(try harness.object(created)["id"] as? String)
            let seen = try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.person)
            #expect(try harness.object(seen)["types"] as? [String] == ["heart_rate", "position"])

            let wrong = try await harness.sendRequest(parties, types: ["positions", "position", "position"])
            #expect(wrong.status == .unprocessableContent)
            let fields = (try harness.object(wrong)["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
            #expect(fields == ["types[0]", "types[2]"], "\(harness.text(wrong))")
        }
    }

    @Test("positions download as JSON, CSV and GPX, inside the window; the samples' download leaves them out")
    func download() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await uploadPositions(harness, Self.track, token: parties.person)
            try await harness.uploadHeartRates(["2026-05-01T07:00:01Z"], token: parties.person)
            let id = try await harness.acceptedRequestID(
                parties, types: ["heart_rate", "position"], window: .init(from: "2026-05-01T00:00:00Z", to: "2026-05-01T23:59:59Z"))

            let json = try await positions(harness, id, token: parties.company)
            #expect(json.times == ["2026-05-01T07:00:00Z", "2026-05-01T07:00:05.5Z"])
            let samples = try await harness.download(id, token: parties.company)
            #expect(samples.items.map(\.type) == ["heart_rate"])
            #expect(samples.availableTypes == ["heart_rate"])

            let csv = try await harness.request(.get, "/v1/single-requests/\(id)/positions?format=csv", token: parties.company)
            #expect(csv.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(
                harness.text(csv).split(separator: "\r\n").map(String.init) == [
                    "at,latitude,longitude,elevation,accuracy", "2026-05-01T07:00:00Z,45.4719,9.1749,122.5,4",
                    "2026-05-01T07:00:05.5Z,45.4725,9.1755,,",
                ])

            let gpx = try await harness.request(
                .get, "/v1/single-requests/\(id)/positions", token: parties.company, headers: [.accept: "application/gpx+xml"])
            #expect(gpx.headers[.contentType] == "application/gpx+xml; charset=utf-8")
            #expect(gpx.headers[Self.cursorHeader] == json.nextCursor)
            // What the company receives is a GPX file the broker itself reads back, point for point.
            let points = try GPXTrack.parse(Data(harness.text(gpx).utf8)).get().points
            #expect(points.count == 2)
            #expect(
                points.first
                    == GPXTrack.Point(
                        latitude: 45.4719, longitude: 9.1749, elevation: 122.5, accuracy: 4, time: Timestamp.parse("2026-05-01T07:00:00Z")))
            #expect(points.last?.time == Timestamp.parse("2026-05-01T07:00:05.5Z"))
            let bad = try await harness.request(.get, "/v1/single-requests/\(id)/positions?format=kml", token: parties.company)
            #expect(bad.status == .unprocessableContent)
        }
    }

    @Test("a request that did not ask for position releases none (409), nor does one whose person has none")
    func notAskedNotReleased() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await uploadPositions(harness, Self.track, token: parties.person)
            try await harness.uploadHeartRates(["2026-05-01T07:00:01Z"], token: parties.person)
            let heartOnly = try await harness.acceptedRequestID(parties, types: ["heart_rate"])
            let refused = try await harness.request(.get, "/v1/single-requests/\(heartOnly)/positions", token: parties.company)
            #expect(refused.status == .conflict)
            #expect(try harness.object(refused)["type"] as? String == "https://data4help.example/problems/no-requested-data")

            let other = try await harness.requestParties(companyName: "Other Runs S.r.l.")
            try await harness.uploadHeartRates(["2026-05-01T07:00:01Z"], token: other.person)
            let none = try await harness.acceptedRequestID(other, types: ["position"])
            #expect(try await harness.request(.get, "/v1/single-requests/\(none)/positions", token: other.company).status == .conflict)
            // Nor does a position-only request release samples.
            #expect(try await harness.request(.get, "/v1/single-requests/\(none)/data", token: other.company).status == .conflict)
            // Another company's request is not found, and the person may not download.
            #expect(try await harness.request(.get, "/v1/single-requests/\(heartOnly)/positions", token: other.company).status == .notFound)
            #expect(try await harness.request(.get, "/v1/single-requests/\(heartOnly)/positions", token: parties.person).status == .forbidden)
        }
    }

    @Test("a one-off request releases only positions that had arrived when it was accepted")
    func oneOffBound() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await uploadPositions(harness, [Self.track[0]], token: parties.person)
            let id = try await harness.acceptedRequestID(parties, types: ["position"])
            try await uploadPositions(harness, [Self.track[1]], token: parties.person)
            #expect(try await positions(harness, id, token: parties.company).times == ["2026-05-01T07:00:00Z"])
        }
    }

    @Test("the positions' cursor moves only with positions: samples uploaded meanwhile do not move it")
    func cursorIgnoresSamples() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await uploadPositions(harness, [Self.track[0]], token: parties.person)
            let id = try await harness.acceptedRequestID(parties, types: ["position", "heart_rate"], subscriptionDays: 30)
            let first = try await positions(harness, id, token: parties.company)
            #expect(first.times.count == 1)
            // Samples share the arrival sequence: a cursor moved by them would tell the company of each upload.
            try await harness.uploadHeartRates(["2026-05-01T07:00:01Z", "2026-05-01T07:00:02Z"], token: parties.person)
            let unchanged = try await positions(harness, id, cursor: first.nextCursor, token: parties.company)
            #expect(unchanged.times.isEmpty)
            #expect(unchanged.nextCursor == first.nextCursor)
            try await uploadPositions(harness, [Self.track[1]], token: parties.person)
            let fresh = try await positions(harness, id, cursor: first.nextCursor, token: parties.company)
            #expect(fresh.times == ["2026-05-01T07:00:05.5Z"])
            #expect(fresh.nextCursor != first.nextCursor)
        }
    }

    @Test("a download of positions is in the person's access log and the audit log, with its count")
    func accessLog() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await uploadPositions(harness, Self.track, token: parties.person)
            let id = try await harness.acceptedRequestID(parties, types: ["position"])
            _ = try await positions(harness, id, token: parties.company)
            let log = try await harness.request(.get, "/v1/me/access-log", token: parties.person)
            let entry = try #require((try harness.object(log)["items"] as? [[String: Any]])?.first)
            #expect(entry["types"] as? [String] == ["position"])
            #expect(entry["samples"] as? Int == 3)
            #expect((entry["description"] as? String)?.contains("3 positions of yours") == true, "\(entry)")
            let audited = try await harness.sql(
                "SELECT details->>'types', details->>'rows' FROM audit_events WHERE action = 'single_request.data_released' AND details->>'types' = 'position'"
            )
            #expect(try audited.map { try $0.decode((String, String).self) }.contains { $0 == ("position", "3") })
        }
    }

    @Test("a subscriber that asked for position hears of new positions, coalesced, with a cursor that fetches them")
    func positionsAvailableWebhook() async throws {
        try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
            let parties = try await harness.requestParties()
            let registered = try await harness.request(
                .put, "/v1/webhook", json: #"{"url":"http://127.0.0.1:9/hook","secret":"\#(WebhookFixtures.secret)"}"#,
                token: parties.company)
            try #require(registered.status == .ok, "\(harness.text(registered))")
            try await uploadPositions(harness, [Self.track[0]], token: parties.person)
            let id = try await harness.acceptedRequestID(parties, types: ["position"], subscriptionDays: 30)
            let other = try await harness.acceptedRequestID(
                try await harness.requestParties(companyName: "Heart Only S.p.A."), types: ["heart_rate"], subscriptionDays: 30)
            try await uploadPositions(harness, [Self.track[1]], token: parties.person)
            try await uploadPositions(harness, [Self.track[2]], token: parties.person)
            let events = try await harness.queuedEvents(where: "request_id IN ('\(id)', '\(other)') AND type LIKE 'subscription.%'")
            // Two uploads, one undelivered event (the receiver is unreachable, so it is still the first).
            #expect(events.map(\.type) == ["subscription.positions_available"], "\(events.map(\.data))")
            let cursor = try #require(events.first?.cursor)
            #expect(
                try await positions(harness, id, cursor: cursor, token: parties.company).times == ["2026-05-01T07:00:05.5Z", "2026-05-02T07:00:00Z"])
        }
    }

    @Test("erasing the person leaves the company nothing to download")
    func erasure() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await uploadPositions(harness, Self.track, token: parties.person)
            let id = try await harness.acceptedRequestID(parties, types: ["position"])
            let erased = try await harness.request(
                .delete, "/v1/me", json: #"{"password":"\#(TestHarness.Person().password)"}"#, token: parties.person)
            #expect(erased.status == .noContent || erased.status == .ok, "\(harness.text(erased))")
            #expect(try await harness.request(.get, "/v1/single-requests/\(id)/positions", token: parties.company).status == .conflict)
            #expect(try await harness.sql("SELECT 1 FROM positions WHERE user_id = '\(parties.personID)'").isEmpty)
        }
    }
}
