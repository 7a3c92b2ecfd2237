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

/// Organisers, runners and runs for the Track4Run suites: a path in Milan's Parco Sempione area, from A
/// east to B, then north to C (about 1.3 km).
enum RunFixtures {
    static let a = GeoPoint(latitude: 45.4700, longitude: 9.1700)
    static let b = GeoPoint(latitude: 45.4700, longitude: 9.1800)
    static let c = GeoPoint(latitude: 45.4750, longitude: 9.1800)

    /// The path as a route planner exports it (a GPX route, no times).
    static let gpx = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="planner" xmlns="http://www.topografix.com/GPX/1/1">
          <rte><name>Sempione loop</name>
            <rtept lat="\(a.latitude)" lon="\(a.longitude)"/><rtept lat="\(b.latitude)" lon="\(b.longitude)"/><rtept lat="\(c.latitude)" lon="\(c.longitude)"/>
          </rte>
        </gpx>
        """

    static let geoJSON =
        #"{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[9.17,45.47],[9.18,45.47],[9.18,45.475]]}}"#

    static func organiser(_ harness: TestHarness, name: String = "Milano Runners S.S.D.") async throws -> String {
        var company = TestHarness.Company()
        company.vatNumber = TestHarness.uniqueVATNumber()
        company.companyName = name
        return try await harness.activeCompany(company)
    }

    /// A person with their own fiscal code; their token and email.
    static func runner(_ harness: TestHarness, fullName: String = "Giulia Verdi") async throws -> (token: String, email: String) {
        var person = TestHarness.Person()
        person.fiscalCode = TestHarness.uniqueFiscalCode()
        person.fullName = fullName
        return (try await harness.activeUser(person), person.email)
    }

    static func creation(startingIn seconds: TimeInterval = 600, places: Int = 50, name: String = "Sempione 1K") -> Components.Schemas.RunCreation {
        .init(
            name: name, startsAt: Timestamp.rfc3339(Date().addingTimeInterval(seconds)), durationMinutes: 60, maxParticipants: places,
            path: .init(format: .gpx, data: gpx))
    }

    /// Creates a run and returns its id.
    static func run(_ harness: TestHarness, organiser: String, startingIn seconds: TimeInterval = 600, places: Int = 50) async throws -> String {
        let response = try await harness.request(
            .post, "/v1/runs", json: creation(startingIn: seconds, places: places).contractJSON, token: organiser)
        try #require(response.status == .created, "create answered \(response.status): \(harness.text(response))")
        return try #require(try harness.object(response)["id"] as? String)
    }

    static func join(_ harness: TestHarness, _ runID: String, token: String, displayName: String? = nil) async throws -> [String: Any] {
        let response = try await harness.request(
            .post, "/v1/runs/\(runID)/participation", json: Components.Schemas.RunJoining(displayName: displayName).contractJSON, token: token)
        try #require(response.status == .created, "join answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    /// Accepts the run's request that reached the runner.
    static func acceptRunRequest(_ harness: TestHarness, _ runID: String, token: String) async throws {
        let place = try await harness.request(.get, "/v1/runs/\(runID)/participation", token: token)
        let requestID = try #require(try harness.object(place)["requestId"] as? String, "no run request: \(harness.text(place))")
        let accepted = try await harness.request(.post, "/v1/single-requests/\(requestID)/accept", token: token)
        try #require(accepted.status == .ok, "accept answered \(accepted.status): \(harness.text(accepted))")
    }

    /// Uploads one position at `point`, taken `secondsAgo` ago.
    static func position(_ harness: TestHarness, _ point: GeoPoint, secondsAgo: TimeInterval = 0, token: String) async throws {
        let upload = Components.Schemas.PositionUpload(positions: [
            .init(at: Timestamp.rfc3339(Date().addingTimeInterval(-secondsAgo)), latitude: point.latitude, longitude: point.longitude)
        ])
        let response = try await harness.request(.post, "/v1/me/positions", json: upload.contractJSON, token: token)
        try #require(response.status == .ok, "upload answered \(response.status): \(harness.text(response))")
    }

    /// Checks the runner in: accepts the run's request, uploads a position at the start, checks in.
    static func checkIn(_ harness: TestHarness, _ runID: String, token: String) async throws {
        try await acceptRunRequest(harness, runID, token: token)
        try await position(harness, a, token: token)
        let response = try await harness.request(.post, "/v1/runs/\(runID)/participation/check-in", token: token)
        try #require(response.status == .ok, "check-in answered \(response.status): \(harness.text(response))")
    }

    /// Moves the run so it started `secondsAgo` ago, and its requests' windows with it: the time the run's
    /// day sees passes without the test waiting for it.
    static func start(_ harness: TestHarness, _ runID: String, secondsAgo: Int = 60) async throws {
        _ = try await harness.sql(
            """
            UPDATE single_requests q SET window_from = q.window_from - d.shift, window_to = q.window_to - d.shift
            FROM (SELECT starts_at - (now() - make_interval(secs => \(secondsAgo))) AS shift FROM runs WHERE id = '\(runID)') d
            WHERE q.id IN (SELECT request_id FROM run_participants WHERE run_id = '\(runID)')
            """)
        _ = try await harness.sql("UPDATE runs SET starts_at = now() - make_interval(secs => \(secondsAgo)) WHERE id = '\(runID)'")
    }

    /// The run's day passes every 100 ms.
    static func fast(_ configuration: inout BrokerConfiguration) {
        configuration.runDayInterval = .milliseconds(100)
    }
}
