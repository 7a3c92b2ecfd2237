import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `POST /v1/me/samples`: JSON and CSV bodies, atomic validation, idempotence, roles, and what the
/// database holds afterwards (samples, daily rollups, arrival numbers).
@Suite("Sample upload", .serialized)
struct SampleUploadTests {
    typealias Triple = (type: String, value: Double, at: String)

    private func counts(_ response: TestResponse, _ harness: TestHarness) throws -> (accepted: Int, duplicates: Int) {
        let body = try harness.object(response)
        return (try #require(body["accepted"] as? Int), try #require(body["duplicates"] as? Int))
    }

    private func expectCounts(
        _ response: TestResponse, _ harness: TestHarness, accepted: Int, duplicates: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == .ok, "\(harness.text(response))", sourceLocation: sourceLocation)
        guard response.status == .ok else { return }
        let got = try counts(response, harness)
        #expect(got.accepted == accepted, "accepted", sourceLocation: sourceLocation)
        #expect(got.duplicates == duplicates, "duplicates", sourceLocation: sourceLocation)
    }

    private func expectInvalid(
        _ response: TestResponse, _ harness: TestHarness, fields: [String], _ comment: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == .unprocessableContent, "\(comment) \(harness.text(response))", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", "\(comment)", sourceLocation: sourceLocation)
        #expect(try harness.errorFields(response) == fields, "\(comment)", sourceLocation: sourceLocation)
    }

    private func sampleCount(_ harness: TestHarness) async throws -> Int {
        try await harness.int("SELECT count(*) FROM samples")
    }

    /// Samples `(type, at)` → value as the database holds them, `at` as UTC text with microseconds.
    private func stored(_ harness: TestHarness) async throws -> [String: Double] {
        let rows = try await harness.sql(
            """
            SELECT type::int8, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), value FROM samples
            """)
        var result: [String: Double] = [:]
        for row in rows {
            let (type, at, value) = try row.decode((Int64, String, Double).self)
            let name = SampleType.allCases.first { Int64($0.code) == type }?.rawValue ?? "?"
            result["\(name)@\(at)"] = value
        }
        return result
    }

    private static func at(_ offset: TimeInterval) -> String {
        Timestamp.rfc3339(Date().addingTimeInterval(offset))
    }

    // MARK: JSON, accepted and duplicates

    @Test("a JSON upload stores every sample and says how many were accepted")
    func acceptedCount() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.upload(
                [
                    ("heart_rate", 72.5, "2026-03-01T08:00:00Z"),
                    ("heart_rate", 75, "2026-03-01T08:05:00Z"),
                    ("weight", 61.2, "2026-03-01T08:00:00Z"),
                ], token: token)
            try expectCounts(response, harness, accepted: 3, duplicates: 0)
            #expect(
                try await stored(harness) == [
                    "heart_rate@2026-03-01T08:00:00.000000": 72.5,
                    "heart_rate@2026-03-01T08:05:00.000000": 75,
                    "weight@2026-03-01T08:00:00.000000": 61.2,
                ])
        }
    }

    @Test("uploading the same batch again stores nothing: every sample is a duplicate, and stored values stay")
    func repeatedBatch() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let batch: [Triple] = [
                ("heart_rate", 72, "2026-03-01T08:00:00Z"), ("heart_rate", 74, "2026-03-01T09:00:00Z"),
                ("step_count", 1200, "2026-03-01T09:00:00Z"),
            ]
            try expectCounts(try await harness.upload(batch, token: token), harness, accepted: 3, duplicates: 0)
            try expectCounts(try await harness.upload(batch, token: token), harness, accepted: 0, duplicates: 3)
            #expect(try await sampleCount(harness) == 3)

            // Same (type, at), another value: still a duplicate, and the first value is kept.
            let changed = try await harness.upload(
                [("heart_rate", 99, "2026-03-01T08:00:00Z"), ("heart_rate", 80, "2026-03-01T10:00:00Z")], token: token)
            try expectCounts(changed, harness, accepted: 1, duplicates: 1)
            let values = try await stored(harness)
            #expect(values["heart_rate@2026-03-01T08:00:00.000000"] == 72)
            #expect(values.count == 4)
            #expect(try await harness.int("SELECT count FROM daily_rollups WHERE type = 1") == 3)
        }
    }

    @Test("a (type, at) repeated inside one batch is counted as a duplicate and the first one is kept")
    func duplicatesInsideBatch() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.upload(
                [
                    ("heart_rate", 70, "2026-03-01T08:00:00Z"),
                    ("heart_rate", 71, "2026-03-01T08:00:00Z"),
                    ("heart_rate", 72, "2026-03-01T09:00:00+01:00"),  // the same instant as the first, written in +01:00
                    ("heart_rate", 73, "2026-03-01T08:30:00Z"),
                ], token: token)
            try expectCounts(response, harness, accepted: 2, duplicates: 2)
            #expect(
                try await stored(harness) == [
                    "heart_rate@2026-03-01T08:00:00.000000": 70, "heart_rate@2026-03-01T08:30:00.000000": 73,
                ])
            #expect(try await harness.int("SELECT count FROM daily_rollups") == 2)
        }
    }

    @Test("the same time with another type is not a duplicate")
    func sameTimeOtherType() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let at = "2026-03-01T08:00:00Z"
            let response = try await harness.upload(
                SampleType.allCases.map { ($0.rawValue, $0.range.lowerBound, at) }, token: token)
            try expectCounts(response, harness, accepted: SampleType.allCases.count, duplicates: 0)
            #expect(try await sampleCount(harness) == SampleType.allCases.count)
        }
    }

    @Test("fractional seconds and offsets are stored exactly, to the microsecond, and listed back in UTC")
    func fractionsAndOffsets() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.upload(
                [
                    ("heart_rate", 70, "2026-03-01T08:00:00.5+01:00"),
                    ("heart_rate", 71, "2026-03-01T08:00:00.123456Z"),
                    ("heart_rate", 72, "2026-03-01T08:00:00.000001-05:30"),
                    ("heart_rate", 73, "2026-03-01T08:00:00.1234569Z"),  // beyond the microsecond: truncated
                    ("heart_rate", 74, "2026-03-01T23:30:00-02:00"),  // the next UTC day
                ], token: token)
            try expectCounts(response, harness, accepted: 4, duplicates: 1)
            #expect(
                try await stored(harness) == [
                    "heart_rate@2026-03-01T07:00:00.500000": 70,
                    "heart_rate@2026-03-01T08:00:00.123456": 71,
                    "heart_rate@2026-03-01T13:30:00.000001": 72,
                    "heart_rate@2026-03-02T01:30:00.000000": 74,
                ])
            let list = try await harness.request(.get, "/v1/me/samples", token: token)
            #expect(list.status == .ok)
            let items = try harness.object(list)["items"] as? [[String: Any]] ?? []
            #expect(
                items.map { $0["at"] as? String } == [
                    "2026-03-01T07:00:00.5Z", "2026-03-01T08:00:00.123456Z", "2026-03-01T13:30:00.000001Z", "2026-03-02T01:30:00Z",
                ])
            #expect(items.map { $0["value"] as? Double } == [70, 71, 72, 74])
            // The rollup day is the UTC day, not the day of the written offset.
            let days = try await harness.sql("SELECT day::text, count::int8 FROM daily_rollups ORDER BY day")
            #expect(try days.map { try $0.decode((String, Int64).self) }.map { "\($0.0)=\($0.1)" } == ["2026-03-01=3", "2026-03-02=1"])
        }
    }

    // MARK: Batch size

    @Test("10,000 samples are accepted in one upload")
    func maximumBatch() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
            let batch: [Triple] = (0..<10_000).map {
                ("heart_rate", Double(40 + $0 % 100), Timestamp.rfc3339(start.addingTimeInterval(Double($0) * 60)))
            }
            try expectCounts(try await harness.upload(batch, token: token), harness, accepted: 10_000, duplicates: 0)
            #expect(try await sampleCount(harness) == 10_000)
            #expect(try await harness.int("SELECT sum(count)::int8 FROM daily_rollups") == 10_000)
            #expect(try await harness.int("SELECT max(arrival) FROM samples") == 10_000)
        }
    }

    @Test("10,001 samples are a 422 naming samples, and nothing is stored")
    func overMaximumBatch() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let start = Date(timeIntervalSince1970: 1_767_225_600)
            let batch: [Triple] = (0..<10_001).map { ("heart_rate", 60, Timestamp.rfc3339(start.addingTimeInterval(Double($0) * 60))) }
            try expectInvalid(try await harness.upload(batch, token: token), harness, fields: ["samples"])
            #expect(try await sampleCount(harness) == 0)
            #expect(try await harness.int("SELECT count(*) FROM daily_rollups") == 0)
        }
    }

    @Test("an empty samples array is a 422 naming samples")
    func emptyBatch() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            try expectInvalid(try await harness.upload([], token: token), harness, fields: ["samples"])
            #expect(try await sampleCount(harness) == 0)
        }
    }

    // MARK: Validation

    @Test("each type's range bounds are accepted and values just outside them are a 422 naming the value", arguments: SampleType.allCases)
    func rangeBounds(type: SampleType) async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let low = type.range.lowerBound
            let high = type.range.upperBound
            let below = low == 0 ? -0.000001 : low.nextDown
            let above = high.nextUp
            // One batch: valid samples first and last, out-of-range in the middle; nothing may be stored.
            let bad = try await harness.upload(
                [
                    (type.rawValue, low, "2026-03-01T08:00:00Z"),
                    (type.rawValue, below, "2026-03-01T08:01:00Z"),
                    (type.rawValue, above, "2026-03-01T08:02:00Z"),
                    (type.rawValue, high, "2026-03-01T08:03:00Z"),
                ], token: token)
            try expectInvalid(bad, harness, fields: ["samples[1].value", "samples[2].value"])
            #expect(try await sampleCount(harness) == 0)

            let good = try await harness.upload(
                [
                    (type.rawValue, low, "2026-03-01T08:00:00Z"),
                    (type.rawValue, low == 0 ? 0.000001 : low.nextUp, "2026-03-01T08:01:00Z"),
                    (type.rawValue, high.nextDown, "2026-03-01T08:02:00Z"),
                    (type.rawValue, high, "2026-03-01T08:03:00Z"),
                ], token: token)
            try expectCounts(good, harness, accepted: 4, duplicates: 0)
            let values = try await harness.sql("SELECT value FROM samples ORDER BY at").map { try $0.decode(Double.self) }
            #expect(values == [low, low == 0 ? 0.000001 : low.nextUp, high.nextDown, high])
        }
    }

    @Test("one batch with every kind of invalid sample is a 422 listing exactly those indices, and the valid ones are not stored")
    func everyInvalidKind() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.upload(
                [
                    ("heart_rate", 70, "2026-03-01T08:00:00Z"),  // 0 valid
                    ("blood_sugar", 5, "2026-03-01T08:00:00Z"),  // 1 unknown type
                    ("weight", 60, "2026-03-01T08:00:00Z"),  // 2 valid
                    ("oxygen_saturation", 101, "2026-03-01T08:00:00Z"),  // 3 out of range
                    ("heart_rate", 71, Self.at(4 * 60)),  // 4 valid: 4 minutes ahead is clock drift
                    ("heart_rate", 72, Self.at(6 * 60)),  // 5 six minutes in the future
                    ("heart_rate", 73, "yesterday"),  // 6 unparseable
                    ("heart_rate", 74, "2026-02-30T08:00:00Z"),  // 7 no such day
                    ("HEART_RATE", 75, "2026-03-01T09:00:00Z"),  // 8 types are case-sensitive
                    ("heart_rate", 76, "2026-03-01T10:00:00"),  // 9 no offset
                ], token: token)
            try expectInvalid(
                response, harness,
                fields: [
                    "samples[1].type", "samples[3].value", "samples[5].at", "samples[6].at", "samples[7].at", "samples[8].type",
                    "samples[9].at",
                ])
            #expect(try await sampleCount(harness) == 0)
            #expect(try await harness.int("SELECT count(*) FROM daily_rollups") == 0)
            #expect(try await harness.int("SELECT coalesce(max(last_arrival), 0) FROM sample_arrivals") == 0)
        }
    }

    @Test("a sample 4 minutes in the future is accepted, 6 minutes is a 422")
    func futureSkew() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            try expectInvalid(try await harness.upload([("heart_rate", 70, Self.at(6 * 60))], token: token), harness, fields: ["samples[0].at"])
            try expectCounts(try await harness.upload([("heart_rate", 70, Self.at(4 * 60))], token: token), harness, accepted: 1, duplicates: 0)
            #expect(try await sampleCount(harness) == 1)
        }
    }

    @Test("the future is judged by the server's clock: a reading an hour ahead is refused, then accepted once the clock is an hour on")
    func futureByTheServersClock() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: { $0.clock = clock.wall }) { harness in
            let token = try await harness.activeUser()
            let ahead = Self.at(3600)
            try expectInvalid(try await harness.upload([("heart_rate", 70, ahead)], token: token), harness, fields: ["samples[0].at"])
            clock.advance(by: .seconds(3600))
            try expectCounts(try await harness.upload([("heart_rate", 70, ahead)], token: token), harness, accepted: 1, duplicates: 0)
        }
    }

    @Test("a missing, null or mistyped field is a 422 naming it")
    func missingOrMistypedField() async throws {
        let cases = [
            (#"{"samples":[{"type":"heart_rate","at":"2026-03-01T08:00:00Z"}]}"#, "samples[0].value"),
            (
                #"{"samples":[{"type":"heart_rate","value":70,"at":"2026-03-01T08:00:00Z"},{"type":"heart_rate","value":null,"at":"2026-03-01T09:00:00Z"}]}"#,
                "samples[1].value"
            ),
            (#"{"samples":[{"type":"heart_rate","value":"70","at":"2026-03-01T08:00:00Z"}]}"#, "samples[0].value"),
            (#"{"samples":[{"value":70,"at":"2026-03-01T08:00:00Z"}]}"#, "samples[0].type"),
            (#"{"samples":[{"type":"heart_rate","value":70}]}"#, "samples[0].at"),
            (#"{}"#, "samples"),
            (#"{"samples":{}}"#, "samples"),
        ]
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for (body, field) in cases {
                let response = try await harness.request(.post, "/v1/me/samples", json: body, token: token)
                try expectInvalid(response, harness, fields: [field], body)
            }
            #expect(try await sampleCount(harness) == 0)
        }
    }

    @Test("a body that is JSON but not an object (an array, a string, a number, null) is a 400, as is malformed JSON")
    func bodyNotAnObjectOrMalformed() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for body in [
                "[]", #""x""#, "42", "null",
                #"{"samples":["#, #"{"samples":[{"type":"heart_rate","value":70,"at":"#, "samples", "{'samples':[]}",
            ] {
                let response = try await harness.request(.post, "/v1/me/samples", json: body, token: token)
                #expect(response.status == .badRequest, "\(body): \(harness.text(response))")
                #expect(response.headers[.contentType] == "application/problem+json", "\(body)")
            }
            #expect(try await sampleCount(harness) == 0)
        }
    }

    @Test(
        "JSON with a trailing comma is malformed: a 400, and nothing is stored",
        .disabled("bug: the server accepts trailing commas (Foundation's JSONDecoder is lenient), storing the samples with 200")
    )
    func trailingComma() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for body in [
                #"{"samples":[{"type":"heart_rate","value":70,"at":"2026-03-01T08:00:00Z"},]}"#,
                #"{"samples":[{"type":"heart_rate","value":70,"at":"2026-03-01T08:00:00Z",}]}"#,
            ] {
                let response = try await harness.request(.post, "/v1/me/samples", json: body, token: token)
                #expect(response.status == .badRequest, "\(body) answered \(response.status)")
            }
            #expect(try await sampleCount(harness) == 0)
        }
    }

    @Test("an unsupported content type is a 415")
    func unsupportedContentType() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let body = TestHarness.samplesJSON([("heart_rate", 70, "2026-03-01T08:00:00Z")])
            let response = try await harness.request(.post, "/v1/me/samples", json: body, token: token, headers: [.contentType: "text/plain"])
            #expect(response.status == .unsupportedMediaType)
            #expect(try await sampleCount(harness) == 0)
        }
    }

    // MARK: Who may upload

    @Test("a company, with a session or an API key, and an auditor get 403, and nothing is stored")
    func wrongRoles() async throws {
        try await TestHarness.run { harness in
            let batch: [Triple] = [("heart_rate", 70, "2026-03-01T08:00:00Z")]
            let company = try await harness.activeCompany()
            #expect(try await harness.upload(batch, token: company).status == .forbidden)
            let key = try await harness.request(.post, "/v1/api-keys", json: "{}", token: company)
            let secret = try #require(try harness.object(key)["secret"] as? String)
            #expect(try await harness.upload(batch, token: secret).status == .forbidden)
            let csv = try await harness.uploadCSV("type,value,at\nheart_rate,70,2026-03-01T08:00:00Z\n", token: secret)
            #expect(csv.status == .forbidden)
            let auditor = try await harness.activeAuditor()
            let asAuditor = try await harness.upload(batch, token: auditor)
            #expect(asAuditor.status == .forbidden)
            #expect(asAuditor.headers[.contentType] == "application/problem+json")
            #expect(try await sampleCount(harness) == 0)
        }
    }

    @Test("no token, or an unknown one, is a 401")
    func unauthenticated() async throws {
        try await TestHarness.run { harness in
            let batch: [Triple] = [("heart_rate", 70, "2026-03-01T08:00:00Z")]
            let none = try await harness.upload(batch, token: nil)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Bearer")
            #expect(try await harness.upload(batch, token: "not-a-token").status == .unauthorized)
            #expect(try await sampleCount(harness) == 0)
        }
    }

    // MARK: CSV

    @Test("a CSV upload with a header, quoted fields and CRLF line ends is stored")
    func csvUpload() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let csv =
                "type,value,at\r\n"
                + "heart_rate,72.5,2026-03-01T08:00:00Z\r\n"
                + "\"weight\",\"61.25\",\"2026-03-01T08:00:00.25+01:00\"\r\n"
                + "\"step_count\",1200,2026-03-01T09:00:00Z\r\n"
            let response = try await harness.uploadCSV(csv, token: token, contentType: "text/csv; charset=utf-8")
            try expectCounts(response, harness, accepted: 3, duplicates: 0)
            #expect(
                try await stored(harness) == [
                    "heart_rate@2026-03-01T08:00:00.000000": 72.5,
                    "weight@2026-03-01T07:00:00.250000": 61.25,
                    "step_count@2026-03-01T09:00:00.000000": 1200,
                ])
        }
    }

    @Test("CSV with LF line ends and no final newline is stored; duplicates are counted as for JSON")
    func csvDuplicates() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let csv = "type,value,at\nheart_rate,70,2026-03-01T08:00:00Z\nheart_rate,71,2026-03-01T08:00:00Z\nheart_rate,72,2026-03-01T09:00:00Z"
            try expectCounts(try await harness.uploadCSV(csv, token: token), harness, accepted: 2, duplicates: 1)
            try expectCounts(try await harness.uploadCSV(csv, token: token), harness, accepted: 0, duplicates: 3)
            let json = try await harness.upload(
                [("heart_rate", 72, "2026-03-01T09:00:00Z"), ("heart_rate", 73, "2026-03-01T10:00:00Z")], token: token)
            try expectCounts(json, harness, accepted: 1, duplicates: 1)
            #expect(
                try await stored(harness) == [
                    "heart_rate@2026-03-01T08:00:00.000000": 70, "heart_rate@2026-03-01T09:00:00.000000": 72,
                    "heart_rate@2026-03-01T10:00:00.000000": 73,
                ])
        }
    }

    @Test("a CSV without the header type,value,at is a 422 naming line 1")
    func csvWrongHeader() async throws {
        let cases = [
            "kind,value,at\nheart_rate,70,2026-03-01T08:00:00Z\n",
            "heart_rate,70,2026-03-01T08:00:00Z\nheart_rate,71,2026-03-01T09:00:00Z\n",
            "type,value\nheart_rate,70\n",
            "type,value,at,extra\nheart_rate,70,2026-03-01T08:00:00Z,x\n",
            "",
        ]
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for csv in cases {
                try expectInvalid(try await harness.uploadCSV(csv, token: token), harness, fields: ["line 1"], csv)
            }
            #expect(try await sampleCount(harness) == 0)
        }
    }

    @Test("a malformed CSV line is a 422 naming that line, and the valid lines around it are not stored")
    func csvMalformedLine() async throws {
        let cases = [
            ("heart_rate,71\n", "line 3"),
            ("heart_rate,71,2026-03-01T09:00:00Z,extra\n", "line 3"),
            ("\"heart_rate,71,2026-03-01T09:00:00Z\n", "line 3"),
            ("heart_rate,\"71,2026-03-01T09:00:00Z\r\n", "line 3"),
            ("\nheart_rate\n", "line 4"),
        ]
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for (rest, line) in cases {
                let csv = "type,value,at\nheart_rate,70,2026-03-01T08:00:00Z\n" + rest + "heart_rate,72,2026-03-01T10:00:00Z\n"
                try expectInvalid(try await harness.uploadCSV(csv, token: token), harness, fields: [line], csv)
            }
            #expect(try await sampleCount(harness) == 0)
        }
    }

    @Test("invalid CSV values are a 422 naming every offending line, and nothing is stored")
    func csvInvalidValues() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let csv = [
                "type,value,at",
                "heart_rate,70,2026-03-01T08:00:00Z",  // 2 valid
                "blood_sugar,5,2026-03-01T08:00:00Z",  // 3 unknown type
                "heart_rate,NaN,2026-03-01T08:01:00Z",  // 4 not finite
                "heart_rate,inf,2026-03-01T08:02:00Z",  // 5 not finite
                "step_count,-inf,2026-03-01T08:03:00Z",  // 6 not finite
                "heart_rate,,2026-03-01T08:04:00Z",  // 7 no value
                "heart_rate,seventy,2026-03-01T08:05:00Z",  // 8 not a number
                "heart_rate,301,2026-03-01T08:06:00Z",  // 9 out of range
                "heart_rate,70,\(Self.at(6 * 60))",  // 10 in the future
                "heart_rate,70,2026-13-01T08:00:00Z",  // 11 no such month
                "weight,70,2026-03-01T08:00:00Z",  // 12 valid
            ].joined(separator: "\n")
            let response = try await harness.uploadCSV(csv, token: token)
            try expectInvalid(response, harness, fields: (3...11).map { "line \($0)" })
            #expect(try await sampleCount(harness) == 0)
            #expect(try await harness.int("SELECT count(*) FROM daily_rollups") == 0)
        }
    }

    @Test("non-finite values are rejected in every spelling")
    func csvNonFinite() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            for value in ["NaN", "nan", "inf", "-inf", "Infinity", "-Infinity", "1e400"] {
                let csv = "type,value,at\nstep_count,\(value),2026-03-01T08:00:00Z\n"
                try expectInvalid(try await harness.uploadCSV(csv, token: token), harness, fields: ["line 2"], value)
            }
            #expect(try await sampleCount(harness) == 0)
        }
    }

    @Test("a CSV with only the header is a 422 and stores nothing")
    func csvHeaderOnly() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.uploadCSV("type,value,at\n", token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try await sampleCount(harness) == 0)
        }
    }

    // MARK: Atomicity, concurrency and rollups

    @Test("a batch with a repeat inside, then another upload: arrivals and upload records stay consistent")
    func repeatInsideABatchThenMore() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let first = try await harness.upload(
                [
                    ("heart_rate", 60, "2026-03-01T08:00:00Z"), ("heart_rate", 61, "2026-03-01T08:00:00Z"),
                    ("heart_rate", 62, "2026-03-01T08:01:00Z"),
                ], token: token)
            #expect(first.status == .ok)
            // The repeat consumed no arrival number: the next upload's records must not collide with this one's.
            let second = try await harness.upload([("heart_rate", 63, "2026-03-01T08:02:00Z")], token: token)
            #expect(second.status == .ok, "\(harness.text(second))")
            #expect(try await harness.int("SELECT last_arrival FROM sample_arrivals") == 3)
            let recorded = try await harness.sql("SELECT last_arrival FROM sample_batches ORDER BY last_arrival").map { try $0.decode(Int64.self) }
            #expect(recorded == [2, 3], "each upload records the last arrival number it gave")
        }
    }

    @Test("rollups equal a GROUP BY of the samples after mixed uploads with duplicates, per person, type and UTC day")
    func rollupsMatchSamples() async throws {
        try await TestHarness.run { harness in
            let laura = try await harness.activeUser()
            let mario = try await harness.activeUser(
                TestHarness.Person(
                    fiscalCode: TestHarness.uniqueFiscalCode(birthDate: "1985-12-10", sex: "M"), fullName: "Mario Rossi",
                    birthDate: "1985-12-10", sex: "M"))
            try expectCounts(
                try await harness.upload(
                    [
                        ("heart_rate", 60, "2026-03-01T08:00:00Z"), ("heart_rate", 80, "2026-03-01T20:00:00Z"),
                        ("heart_rate", 100, "2026-03-01T23:59:59.999999Z"), ("heart_rate", 50, "2026-03-02T00:00:00Z"),
                        ("weight", 61.5, "2026-03-01T08:00:00Z"),
                    ], token: laura), harness, accepted: 5, duplicates: 0)
            try expectCounts(
                try await harness.upload(
                    [
                        ("heart_rate", 999 / 10, "2026-03-01T08:00:00Z"),  // duplicate, other value
                        ("heart_rate", 40, "2026-03-01T12:00:00Z"), ("heart_rate", 120, "2026-03-02T01:00:00+02:00"),
                        ("heart_rate", 121, "2026-03-02T01:00:00+02:00"),  // duplicate inside the batch
                    ], token: laura), harness, accepted: 2, duplicates: 2)
            try expectCounts(
                try await harness.uploadCSV(
                    "type,value,at\nheart_rate,65,2026-03-01T08:00:00Z\nweight,62,2026-03-02T08:00:00Z\n", token: mario),
                harness, accepted: 2, duplicates: 0)

            #expect(try await harness.int(ConsistencyChecks.rollupMismatches) == 0)
            // The expected rows written out, so a rollup that is merely consistent-looking cannot pass.
            let lauraID = try await harness.accountID(laura)
            let rows = try await harness.sql(
                """
                SELECT type::int8, day::text, count::int8, sum, sum_squares, min, max FROM daily_rollups
                WHERE user_id = '\(lauraID)' ORDER BY type, day
                """)
            let summary = try rows.map { row in
                let (type, day, count, sum, squares, min, max) = try row.decode((Int64, String, Int64, Double, Double, Double, Double).self)
                return "\(type) \(day) n=\(count) sum=\(sum) sq=\(squares) min=\(min) max=\(max)"
            }
            #expect(
                summary == [
                    "1 2026-03-01 n=5 sum=400.0 sq=36000.0 min=40.0 max=120.0",
                    "1 2026-03-02 n=1 sum=50.0 sq=2500.0 min=50.0 max=50.0",
                    "10 2026-03-01 n=1 sum=61.5 sq=3782.25 min=61.5 max=61.5",
                ])
        }
    }

    @Test("concurrent overlapping uploads of one person store each sample once, with unique arrival numbers and exact rollups")
    func concurrentOverlappingUploads() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let start = Date(timeIntervalSince1970: 1_772_323_200)  // 2026-03-01
            func batch(_ range: Range<Int>) -> String {
                TestHarness.samplesJSON(
                    range.map { ("heart_rate", Double(40 + $0 % 150), Timestamp.rfc3339(start.addingTimeInterval(Double($0) * 97))) })
            }
            // Four uploads, each overlapping the next by half: 0..<2000, 1000..<3000, 2000..<4000, 3000..<5000.
            let bodies = (0..<4).map { batch($0 * 1000..<$0 * 1000 + 2000) }
            let results = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                for body in bodies {
                    group.addTask { try await harness.requestOnNewConnection(.post, "/v1/me/samples", json: body, token: token) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            var accepted = 0
            var duplicates = 0
            for (status, body) in results {
                #expect(status == .ok, "\(body)")
                let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
                accepted += object["accepted"] as? Int ?? -1_000_000
                duplicates += object["duplicates"] as? Int ?? -1_000_000
            }
            #expect(accepted == 5000)
            #expect(duplicates == 3000)
            #expect(try await sampleCount(harness) == 5000)
            #expect(try await harness.int("SELECT count(DISTINCT arrival) FROM samples") == 5000)
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM samples s JOIN sample_arrivals a USING (user_id) WHERE s.arrival > a.last_arrival OR s.arrival < 1") == 0)
            #expect(try await harness.int("SELECT count(*) FROM daily_rollups") > 0)
            #expect(try await harness.int(ConsistencyChecks.rollupMismatches) == 0)
        }
    }

    @Test("a late upload of old samples gets higher arrival numbers than every earlier upload")
    func arrivalOrder() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let other = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            try expectCounts(
                try await harness.upload(
                    [
                        ("heart_rate", 70, "2026-03-02T08:00:00Z"), ("heart_rate", 71, "2026-03-02T09:00:00Z"),
                    ], token: token), harness, accepted: 2, duplicates: 0)
            try await harness.upload([("heart_rate", 70, "2026-03-02T08:00:00Z")], token: other)
            // Old samples, arriving late, and one duplicate that must not take a number among the stored ones.
            try expectCounts(
                try await harness.upload(
                    [
                        ("heart_rate", 72, "2025-01-01T08:00:00Z"), ("heart_rate", 70, "2026-03-02T08:00:00Z"),
                        ("heart_rate", 73, "2024-06-01T08:00:00Z"),
                    ], token: token), harness, accepted: 2, duplicates: 1)
            let id = try await harness.accountID(token)
            let rows = try await harness.sql(
                "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'), arrival FROM samples WHERE user_id = '\(id)' ORDER BY arrival")
            let order = try rows.map { try $0.decode((String, Int64).self) }
            #expect(order.map(\.0) == ["2026-03-02 08", "2026-03-02 09", "2025-01-01 08", "2024-06-01 08"])
            #expect(Set(order.map(\.1)).count == 4)
            let otherID = try await harness.accountID(other)
            #expect(try await harness.int("SELECT arrival FROM samples WHERE user_id = '\(otherID)'") == 1)
        }
    }
}
