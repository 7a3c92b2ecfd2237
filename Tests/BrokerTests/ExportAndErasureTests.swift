import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `GET /v1/me/export` holds everything about the person; `DELETE /v1/me` removes all their health data.
@Suite("Export and erasure", .serialized)
struct ExportAndErasureTests {
    typealias Triple = (type: String, value: Double, at: String)

    private func upload(_ harness: TestHarness, _ samples: [Triple], _ token: String) async throws {
        let response = try await harness.upload(samples, token: token)
        try #require(response.status == .ok, "upload answered \(response.status): \(harness.text(response))")
    }

    private func export(_ harness: TestHarness, _ token: String) async throws -> [String: Any] {
        let response = try await harness.request(.get, "/v1/me/export", token: token)
        try #require(response.status == .ok, "export answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    /// Rows of a person in each health-data table.
    private func rows(_ harness: TestHarness, _ id: String) async throws -> [String: Int] {
        var result: [String: Int] = [:]
        for table in ["samples", "daily_rollups", "sample_arrivals"] {
            result[table] = try await harness.int("SELECT count(*) FROM \(table) WHERE user_id = '\(id)'")
        }
        return result
    }

    @Test("the export holds the profile and every sample, in time order, and nothing of anyone else")
    func exportProfileAndSamples() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let other = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            try await upload(
                harness,
                [
                    ("weight", 61.5, "2026-03-02T08:00:00.25Z"), ("heart_rate", 72, "2026-03-01T08:00:00+01:00"),
                    ("heart_rate", 70, "1999-06-15T10:00:00Z"),
                ], token)
            try await upload(harness, [("heart_rate", 99, "2026-03-01T09:00:00Z")], other)

            let before = Date()
            let body = try await export(harness, token)
            let profile = try #require(body["profile"] as? [String: Any])
            #expect(profile["email"] as? String == person.email)
            #expect(profile["fiscalCode"] as? String == person.fiscalCode)
            #expect(profile["fullName"] as? String == person.fullName)
            #expect(profile["birthDate"] as? String == person.birthDate)
            #expect(profile["sex"] as? String == "F")
            #expect(profile["role"] as? String == "user")
            #expect(profile["passwordHash"] == nil && profile["password"] == nil)
            let samples = try #require(body["samples"] as? [[String: Any]])
            #expect(
                samples.map { "\($0["type"] as? String ?? "?") \($0["value"] as? Double ?? .nan) \($0["at"] as? String ?? "?")" } == [
                    "heart_rate 70.0 1999-06-15T10:00:00Z",
                    "heart_rate 72.0 2026-03-01T07:00:00Z",
                    "weight 61.5 2026-03-02T08:00:00.25Z",
                ])
            let exportedAt = try #require(TestHarness.date(body["exportedAt"]))
            #expect(abs(exportedAt.timeIntervalSince(before)) < 60)
        }
    }

    @Test("the export holds every sample even beyond one internal page (10,001 samples)")
    func exportManySamples() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
            let all: [Triple] = (0..<10_001).map { ("step_count", Double($0), Timestamp.rfc3339(start.addingTimeInterval(Double($0) * 60))) }
            try await upload(harness, Array(all.prefix(10_000)), token)
            try await upload(harness, Array(all.suffix(1)), token)
            let samples = try #require(try await export(harness, token)["samples"] as? [[String: Any]])
            #expect(samples.count == 10_001)
            #expect(samples.map { $0["value"] as? Double ?? -1 } == (0..<10_001).map(Double.init))
        }
    }

    @Test("a company's export holds its profile and no samples; no token is a 401")
    func exportCompanyAndUnauthenticated() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let token = try await harness.activeCompany(company)
            let body = try await export(harness, token)
            #expect((body["profile"] as? [String: Any])?["vatNumber"] as? String == company.vatNumber)
            #expect((body["samples"] as? [Any])?.isEmpty == true)
            #expect(try await harness.request(.get, "/v1/me/export").status == .unauthorized)
        }
    }

    @Test("erasure removes the person's samples, rollups and arrival counter from every partition, and leaves everyone else's")
    func erasureRemovesHealthData() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let other = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            let id = try await harness.accountID(token)
            let otherID = try await harness.accountID(other)
            let batch: [Triple] = [
                ("heart_rate", 72, "2026-03-01T08:00:00Z"), ("weight", 61, "2026-03-02T08:00:00Z"),
                ("heart_rate", 70, "1999-06-15T10:00:00Z"),  // the default partition
            ]
            try await upload(harness, batch, token)
            try await upload(harness, batch + [("step_count", 5000, "2026-03-03T20:00:00Z")], other)
            let otherBefore = try await rows(harness, otherID)
            #expect(try await rows(harness, id) == ["samples": 3, "daily_rollups": 3, "sample_arrivals": 1])
            #expect(otherBefore == ["samples": 4, "daily_rollups": 4, "sample_arrivals": 1])
            let otherRows =
                "SELECT string_agg(type || ' ' || at || ' ' || value || ' ' || arrival, ',' ORDER BY type, at) FROM samples WHERE user_id = '\(otherID)'"
            let otherSamples = try await harness.sql(otherRows).first?.decode(String.self)

            let response = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(person.password)"}"#, token: token)
            #expect(response.status == .noContent)

            #expect(try await rows(harness, id) == ["samples": 0, "daily_rollups": 0, "sample_arrivals": 0])
            #expect(try await harness.int("SELECT count(*) FROM samples") == 4)
            #expect(try await rows(harness, otherID) == otherBefore)
            #expect(try await harness.sql(otherRows).first?.decode(String.self) == otherSamples)
            #expect(try await harness.request(.get, "/v1/me/export", token: token).status == .unauthorized)
            let list = try await harness.request(.get, "/v1/me/samples", token: other)
            #expect((try harness.object(list)["items"] as? [Any])?.count == 4)
        }
    }

    @Test("a failed erasure (wrong password) keeps every sample")
    func failedErasureKeepsData() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let id = try await harness.accountID(token)
            try await upload(harness, [("heart_rate", 72, "2026-03-01T08:00:00Z")], token)
            let response = try await harness.request(.delete, "/v1/me", json: #"{"password":"not-my-password"}"#, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try await rows(harness, id) == ["samples": 1, "daily_rollups": 1, "sample_arrivals": 1])
        }
    }
}
