import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `GET /v1/me/samples`: time order, filters, keyset pagination, validation and isolation between people.
@Suite("Sample list", .serialized)
struct SampleListTests {
    typealias Triple = (type: String, value: Double, at: String)

    private struct Page {
        var items: [String]  // "type value at"
        var nextCursor: String?
    }

    private func page(_ harness: TestHarness, _ token: String, _ query: String = "", sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> Page
    {
        let response = try await harness.request(.get, "/v1/me/samples" + (query.isEmpty ? "" : "?" + query), token: token)
        try #require(response.status == .ok, "GET ?\(query) answered \(response.status): \(harness.text(response))", sourceLocation: sourceLocation)
        let body = try harness.object(response)
        let items = try #require(body["items"] as? [[String: Any]], sourceLocation: sourceLocation)
        return Page(
            items: items.map { "\($0["type"] as? String ?? "?") \($0["value"] as? Double ?? .nan) \($0["at"] as? String ?? "?")" },
            nextCursor: body["nextCursor"] as? String)
    }

    /// Every item, following `nextCursor` from the first page (at most 100 pages).
    private func all(_ harness: TestHarness, _ token: String, _ query: String) async throws -> (items: [String], pages: Int) {
        var items: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let separator = query.isEmpty ? "" : "&"
            let next = try await page(harness, token, query + (cursor.map { separator + "cursor=" + escape($0) } ?? ""))
            items += next.items
            cursor = next.nextCursor
            pages += 1
        } while cursor != nil && pages < 100
        return (items, pages)
    }

    private func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? text
    }

    private func upload(_ harness: TestHarness, _ samples: [Triple], _ token: String) async throws {
        let response = try await harness.upload(samples, token: token)
        try #require(response.status == .ok, "upload answered \(response.status): \(harness.text(response))")
    }

    // MARK: Order and filters

    @Test("samples are listed in time order, then in the order of the types' table, whatever the upload order")
    func timeOrder() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            try await upload(
                harness,
                [
                    ("weight", 61, "2026-03-02T08:00:00Z"),
                    ("diastolic_pressure", 80, "2026-03-01T08:00:00Z"),
                    ("heart_rate", 70, "2026-03-01T09:00:00+02:00"),  // 07:00Z, the earliest
                    ("systolic_pressure", 120, "2026-03-01T08:00:00Z"),
                    ("heart_rate", 72, "2026-03-01T08:00:00Z"),
                ], token)
            let first = try await page(harness, token)
            #expect(
                first.items == [
                    "heart_rate 70.0 2026-03-01T07:00:00Z",
                    "heart_rate 72.0 2026-03-01T08:00:00Z",
                    "systolic_pressure 120.0 2026-03-01T08:00:00Z",
                    "diastolic_pressure 80.0 2026-03-01T08:00:00Z",
                    "weight 61.0 2026-03-02T08:00:00Z",
                ])
            #expect(first.nextCursor == nil)
        }
    }

    @Test("an empty list is an empty page without a cursor")
    func emptyList() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.request(.get, "/v1/me/samples", token: token)
            #expect(response.status == .ok)
            let body = try harness.object(response)
            #expect((body["items"] as? [Any])?.isEmpty == true)
            #expect(body["nextCursor"] == nil || body["nextCursor"] is NSNull)
        }
    }

    @Test("type, from and to filter the list; from and to are inclusive, in any offset")
    func filters() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            try await upload(
                harness,
                [
                    ("heart_rate", 70, "2026-03-01T08:00:00Z"),
                    ("heart_rate", 71, "2026-03-01T09:00:00Z"),
                    ("heart_rate", 72, "2026-03-01T10:00:00Z"),
                    ("heart_rate", 73, "2026-03-01T11:00:00Z"),
                    ("weight", 61, "2026-03-01T09:00:00Z"),
                    ("weight", 62, "2026-03-01T10:00:00Z"),
                ], token)
            #expect(
                try await page(harness, token, "type=weight").items == [
                    "weight 61.0 2026-03-01T09:00:00Z", "weight 62.0 2026-03-01T10:00:00Z",
                ])
            #expect(
                try await page(harness, token, "from=2026-03-01T10:00:00Z").items == [
                    "heart_rate 72.0 2026-03-01T10:00:00Z", "weight 62.0 2026-03-01T10:00:00Z", "heart_rate 73.0 2026-03-01T11:00:00Z",
                ])
            #expect(
                try await page(harness, token, "to=2026-03-01T09:00:00Z").items == [
                    "heart_rate 70.0 2026-03-01T08:00:00Z", "heart_rate 71.0 2026-03-01T09:00:00Z", "weight 61.0 2026-03-01T09:00:00Z",
                ])
            #expect(
                try await page(harness, token, "type=heart_rate&from=2026-03-01T09:00:00Z&to=2026-03-01T10:00:00Z").items == [
                    "heart_rate 71.0 2026-03-01T09:00:00Z", "heart_rate 72.0 2026-03-01T10:00:00Z",
                ])
            // 10:30+01:00 is 09:30Z.
            #expect(
                try await page(harness, token, "type=heart_rate&from=" + escape("2026-03-01T10:30:00+01:00")).items == [
                    "heart_rate 72.0 2026-03-01T10:00:00Z", "heart_rate 73.0 2026-03-01T11:00:00Z",
                ])
            #expect(try await page(harness, token, "from=2026-03-01T11:00:00.000001Z").items.isEmpty)
            #expect(try await page(harness, token, "type=step_count").items.isEmpty)
        }
    }

    @Test("from and to are inclusive to the microsecond for times with fractions of a second")
    func fractionalBounds() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            try await upload(
                harness,
                [
                    ("heart_rate", 70, "2026-03-01T08:00:00.1Z"),
                    ("heart_rate", 71, "2026-03-01T08:00:00.123457Z"),
                    ("heart_rate", 72, "2026-03-01T08:00:00.7Z"),
                ], token)
            let both = try await page(harness, token, "from=2026-03-01T08:00:00.123457Z&to=2026-03-01T08:00:00.123457Z")
            #expect(both.items == ["heart_rate 71.0 2026-03-01T08:00:00.123457Z"])
            #expect(try await page(harness, token, "to=2026-03-01T08:00:00.7Z").items.count == 3)
            #expect(try await page(harness, token, "to=2026-03-01T08:00:00.1Z").items == ["heart_rate 70.0 2026-03-01T08:00:00.1Z"])
            #expect(try await page(harness, token, "from=2026-03-01T08:00:00.7Z").items == ["heart_rate 72.0 2026-03-01T08:00:00.7Z"])
        }
    }

    // MARK: Pagination

    @Test("following nextCursor lists every sample exactly once, in order, with ties on the time, whatever the limit")
    func pagination() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            var samples: [Triple] = []
            for hour in 0..<6 {
                samples.append(("heart_rate", Double(60 + hour), "2026-03-01T\(String(format: "%02d", 8 + hour)):00:00Z"))
                if hour % 2 == 0 { samples.append(("weight", Double(60 + hour), "2026-03-01T\(String(format: "%02d", 8 + hour)):00:00Z")) }
                if hour == 3 { samples.append(("step_count", 100, "2026-03-01T11:00:00Z")) }
            }
            try await upload(harness, samples.reversed(), token)
            let everything = try await page(harness, token, "limit=1000").items
            #expect(everything.count == samples.count)
            for limit in [1, 2, 3, 7, 10, 1000] {
                let paged = try await all(harness, token, "limit=\(limit)")
                #expect(paged.items == everything, "limit \(limit)")
                #expect(paged.pages == (samples.count + limit - 1) / limit, "limit \(limit)")
                let first = try await page(harness, token, "limit=\(limit)")
                #expect(first.items.count == min(limit, samples.count), "limit \(limit)")
                #expect((first.nextCursor != nil) == (limit < samples.count), "limit \(limit)")
            }
        }
    }

    @Test("pagination over times with fractions of a second lists every sample exactly once")
    func paginationWithFractions() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let base = Date(timeIntervalSince1970: 1_772_352_000)  // 2026-03-01T08:00:00Z
            // Fractions that binary floating point cannot hold exactly (…0.1, 0.3, 0.123457, …).
            let samples: [Triple] = (0..<40).map { (index: Int) -> Triple in
                let offset: TimeInterval = Double(index) * 1.1 + Double(index % 7) * 0.000013
                return ("heart_rate", Double(60 + index), Timestamp.rfc3339(base.addingTimeInterval(offset)))
            }
            try await upload(harness, samples, token)
            let everything = try await page(harness, token, "limit=1000").items
            #expect(everything.count == 40)
            for limit in [1, 3] {
                let paged = try await all(harness, token, "limit=\(limit)")
                #expect(paged.items == everything, "limit \(limit)")
            }
        }
    }

    @Test("pagination over samples before 2000, with ties on the time, lists every sample exactly once")
    func paginationBefore2000() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            var samples: [Triple] = []
            for index in 0..<12 {
                let at = "1999-06-0\(1 + index / 4)T08:00:0\(index % 4).\(100_001 + index * 111_111)Z"
                samples.append(("heart_rate", Double(60 + index), at))  // two types at each time: ties
                samples.append(("weight", Double(60 + index), at))
            }
            try await upload(harness, samples, token)
            let everything = try await page(harness, token, "limit=1000").items
            #expect(everything.count == 24)
            for limit in [1, 2, 3] {
                let paged = try await all(harness, token, "limit=\(limit)")
                #expect(paged.items == everything, "limit \(limit)")
            }
        }
    }

    @Test("filters hold on every page")
    func paginationWithFilters() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            var samples: [Triple] = []
            for minute in 0..<20 {
                samples.append(("heart_rate", Double(60 + minute), "2026-03-01T08:\(String(format: "%02d", minute)):00Z"))
                samples.append(("weight", Double(60 + minute), "2026-03-01T08:\(String(format: "%02d", minute)):00Z"))
            }
            try await upload(harness, samples, token)
            let paged = try await all(harness, token, "type=weight&from=2026-03-01T08:05:00Z&to=2026-03-01T08:14:00Z&limit=3")
            #expect(paged.items == (5...14).map { "weight \(Double(60 + $0)) 2026-03-01T08:\(String(format: "%02d", $0)):00Z" })
            #expect(paged.pages == 4)
        }
    }

    @Test("the default page holds 100 samples")
    func defaultLimit() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let base = Date(timeIntervalSince1970: 1_772_352_000)
            try await upload(harness, (0..<150).map { ("heart_rate", 70, Timestamp.rfc3339(base.addingTimeInterval(Double($0) * 60))) }, token)
            let first = try await page(harness, token)
            #expect(first.items.count == 100)
            #expect(first.nextCursor != nil)
            let rest = try await page(harness, token, "cursor=" + escape(try #require(first.nextCursor)))
            #expect(rest.items.count == 50)
            #expect(rest.nextCursor == nil)
        }
    }

    // MARK: Validation

    @Test("a bad limit, cursor, from, to or type is a 422 naming it")
    func badQuery() async throws {
        let cases = [
            ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=-1", "limit"), ("limit=abc", "limit"),
            ("cursor=garbage", "cursor"),
            ("cursor=" + Data("1|blood_sugar".utf8).base64EncodedString().replacingOccurrences(of: "=", with: ""), "cursor"),
            ("from=yesterday", "from"), ("to=2026-03-01", "to"), ("from=2026-02-30T08:00:00Z", "from"),
            ("type=blood_sugar", "type"),
        ]
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            try await upload(harness, [("heart_rate", 70, "2026-03-01T08:00:00Z")], token)
            for (query, field) in cases {
                let response = try await harness.request(.get, "/v1/me/samples?\(query)", token: token)
                #expect(response.status == .unprocessableContent, "\(query): \(harness.text(response))")
                #expect(response.headers[.contentType] == "application/problem+json", "\(query)")
                #expect(try harness.errorFields(response) == [field], "\(query)")
            }
        }
    }

    // MARK: Who sees what

    @Test("another person's samples never appear, on any page or filter")
    func isolation() async throws {
        try await TestHarness.run { harness in
            let laura = try await harness.activeUser()
            let mario = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            try await upload(harness, [("heart_rate", 70, "2026-03-01T08:00:00Z"), ("heart_rate", 72, "2026-03-01T10:00:00Z")], laura)
            try await upload(
                harness,
                [
                    ("heart_rate", 90, "2026-03-01T08:00:00Z"), ("heart_rate", 91, "2026-03-01T09:00:00Z"),
                    ("weight", 80, "2026-03-01T09:00:00Z"),
                ], mario)
            #expect(
                try await all(harness, laura, "limit=1").items == [
                    "heart_rate 70.0 2026-03-01T08:00:00Z", "heart_rate 72.0 2026-03-01T10:00:00Z",
                ])
            #expect(try await page(harness, laura, "type=weight").items.isEmpty)
            #expect(try await page(harness, mario).items.count == 3)
            // Laura's cursor, replayed by Mario, shows only Mario's samples.
            let cursor = try #require(try await page(harness, laura, "limit=1").nextCursor)
            #expect(
                try await page(harness, mario, "cursor=" + escape(cursor)).items == [
                    "heart_rate 91.0 2026-03-01T09:00:00Z", "weight 80.0 2026-03-01T09:00:00Z",
                ])
        }
    }

    @Test("a company or an auditor gets 403; no token 401")
    func roles() async throws {
        try await TestHarness.run { harness in
            let company = try await harness.activeCompany()
            #expect(try await harness.request(.get, "/v1/me/samples", token: company).status == .forbidden)
            let auditor = try await harness.activeAuditor()
            #expect(try await harness.request(.get, "/v1/me/samples", token: auditor).status == .forbidden)
            #expect(try await harness.request(.get, "/v1/me/samples").status == .unauthorized)
        }
    }
}
