import Broker
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// `GET /v1/me/statistics`: the caller's own buckets, and the k-gated distribution of their peers'.
@Suite("Statistics", .serialized)
struct StatisticsTests {
    typealias Triple = (type: String, value: Double, at: String)

    struct OwnBucket: Equatable, CustomStringConvertible {
        var start: String
        var count: Int
        var mean, min, max: Double
        var description: String { "\(start) n=\(count) mean=\(mean) min=\(min) max=\(max)" }

        static func == (a: Self, b: Self) -> Bool {
            a.start == b.start && a.count == b.count && abs(a.mean - b.mean) < 1e-9 && a.min == b.min && a.max == b.max
        }
    }

    struct PeerBucket: Equatable, CustomStringConvertible {
        var start: String
        var people: Int
        var mean, p10, p50, p90: Double
        var description: String { "\(start) people=\(people) mean=\(mean) p10=\(p10) p50=\(p50) p90=\(p90)" }

        static func == (a: Self, b: Self) -> Bool {
            a.start == b.start && a.people == b.people && abs(a.mean - b.mean) < 1e-9 && abs(a.p10 - b.p10) < 1e-9
                && abs(a.p50 - b.p50) < 1e-9 && abs(a.p90 - b.p90) < 1e-9
        }
    }

    struct Result {
        var body: [String: Any]
        var own: [OwnBucket]
        var available: Bool?
        var group: String?
        var peers: [PeerBucket]
    }

    private func statistics(_ harness: TestHarness, _ token: String, _ query: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> Result
    {
        let response = try await harness.request(.get, "/v1/me/statistics?\(query)", token: token)
        try #require(response.status == .ok, "answered \(response.status): \(harness.text(response))", sourceLocation: sourceLocation)
        let body = try harness.object(response)
        let own = (body["own"] as? [[String: Any]] ?? []).map {
            OwnBucket(start: $0["start"] as? String ?? "?", count: $0["count"] as? Int ?? -1, mean: $0["mean"] as? Double ?? .nan,
                      min: $0["min"] as? Double ?? .nan, max: $0["max"] as? Double ?? .nan)
        }
        let peers = body["peers"] as? [String: Any] ?? [:]
        let peerBuckets = (peers["buckets"] as? [[String: Any]] ?? []).map {
            PeerBucket(start: $0["start"] as? String ?? "?", people: $0["people"] as? Int ?? -1, mean: $0["mean"] as? Double ?? .nan,
                       p10: $0["p10"] as? Double ?? .nan, p50: $0["p50"] as? Double ?? .nan, p90: $0["p90"] as? Double ?? .nan)
        }
        return Result(body: body, own: own, available: peers["available"] as? Bool, group: peers["group"] as? String, peers: peerBuckets)
    }

    /// PostgreSQL's `percentile_cont`: linear interpolation between the closest ranks.
    static func percentileCont(_ fraction: Double, _ values: [Double]) -> Double {
        let sorted = values.sorted()
        let position = fraction * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Swift.min(lower + 1, sorted.count - 1)
        return sorted[lower] + (position - Double(lower)) * (sorted[upper] - sorted[lower])
    }

    static func peerBucket(_ start: String, _ means: [Double]) -> PeerBucket {
        PeerBucket(start: start, people: means.count, mean: means.reduce(0, +) / Double(means.count),
                   p10: percentileCont(0.1, means), p50: percentileCont(0.5, means), p90: percentileCont(0.9, means))
    }

    /// A daily rollup written directly, as ingest would leave it for these values.
    private func rollup(_ harness: TestHarness, _ userID: String, _ type: SampleType, _ day: String, _ values: [Double]) async throws {
        let sum = values.reduce(0, +), squares = values.reduce(0) { $0 + $1 * $1 }
        _ = try await harness.sql(
            """
            INSERT INTO daily_rollups (user_id, type, day, count, sum, sum_squares, min, max)
            VALUES ('\(userID)', \(type.code), '\(day)', \(values.count), \(sum), \(squares), \(values.min()!), \(values.max()!))
            """)
    }

    private func upload(_ harness: TestHarness, _ samples: [Triple], _ token: String) async throws {
        let response = try await harness.upload(samples, token: token)
        try #require(response.status == .ok, "upload answered \(response.status): \(harness.text(response))")
    }

    static var year: Int { CalendarDate.today.year }

    /// A woman aged 35 this whole year (born on 1 January): her peers are "women aged 30–39".
    static func caller() -> TestHarness.Person {
        let birth = "\(year - 35)-01-01"
        return TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode(birthDate: birth, sex: "F"), birthDate: birth, sex: "F")
    }

    /// Birth dates of women in the caller's band (aged 31–38 whatever today's date).
    static let peerBirthDates = ["\(year - 33)-06-15", "\(year - 38)-12-31", "\(year - 32)-03-03", "\(year - 37)-09-09", "\(year - 31)-07-07"]

    static func day(_ offset: Int, from date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date.addingTimeInterval(Double(offset) * 86_400))
    }

    // MARK: Own

    /// Heart rate of the caller across March 2026, plus samples the window or the type must leave out.
    private static let ownSamples: [Triple] = [
        ("heart_rate", 200, "2026-02-28T08:00:00Z"),  // before the window
        ("heart_rate", 60, "2026-03-01T10:00:00Z"),  // Sunday
        ("heart_rate", 80, "2026-03-01T23:30:00-02:00"),  // Monday 2 March, 01:30 UTC
        ("heart_rate", 100, "2026-03-02T12:00:00Z"),
        ("heart_rate", 70, "2026-03-04T08:00:00Z"),
        ("heart_rate", 50, "2026-03-08T08:00:00Z"),  // Sunday
        ("heart_rate", 90, "2026-03-09T08:00:00Z"),  // Monday
        ("heart_rate", 65, "2026-03-31T08:00:00Z"),
        ("heart_rate", 75, "2026-04-01T08:00:00Z"),
        ("heart_rate", 250, "2026-04-02T08:00:00Z"),  // after the window
        ("weight", 61, "2026-03-02T08:00:00Z"),  // another type
    ]

    @Test("own statistics by day: count, mean, min and max of each UTC day in the window")
    func ownByDay() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            try await upload(harness, Self.ownSamples, token)
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-04-01&bucket=day")
            #expect(result.own == [
                OwnBucket(start: "2026-03-01", count: 1, mean: 60, min: 60, max: 60),
                OwnBucket(start: "2026-03-02", count: 2, mean: 90, min: 80, max: 100),
                OwnBucket(start: "2026-03-04", count: 1, mean: 70, min: 70, max: 70),
                OwnBucket(start: "2026-03-08", count: 1, mean: 50, min: 50, max: 50),
                OwnBucket(start: "2026-03-09", count: 1, mean: 90, min: 90, max: 90),
                OwnBucket(start: "2026-03-31", count: 1, mean: 65, min: 65, max: 65),
                OwnBucket(start: "2026-04-01", count: 1, mean: 75, min: 75, max: 75),
            ])
            #expect(result.body["type"] as? String == "heart_rate")
            #expect(result.body["unit"] as? String == "beats/min")
            #expect(result.body["bucket"] as? String == "day")
        }
    }

    @Test("own statistics by week: weeks start on Monday")
    func ownByWeek() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            try await upload(harness, Self.ownSamples, token)
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-04-01&bucket=week")
            #expect(result.own == [
                OwnBucket(start: "2026-02-23", count: 1, mean: 60, min: 60, max: 60),
                OwnBucket(start: "2026-03-02", count: 4, mean: 75, min: 50, max: 100),
                OwnBucket(start: "2026-03-09", count: 1, mean: 90, min: 90, max: 90),
                OwnBucket(start: "2026-03-30", count: 2, mean: 70, min: 65, max: 75),
            ])
            #expect(result.body["bucket"] as? String == "week")
        }
    }

    @Test("own statistics by month: months start on the first")
    func ownByMonth() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            try await upload(harness, Self.ownSamples, token)
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-04-01&bucket=month")
            #expect(result.own == [
                OwnBucket(start: "2026-03-01", count: 7, mean: 515.0 / 7, min: 50, max: 100),
                OwnBucket(start: "2026-04-01", count: 1, mean: 75, min: 75, max: 75),
            ])
            #expect(result.body["bucket"] as? String == "month")
            let weight = try await statistics(harness, token, "type=weight&from=2026-03-01&to=2026-04-01&bucket=month")
            #expect(weight.own == [OwnBucket(start: "2026-03-01", count: 1, mean: 61, min: 61, max: 61)])
            #expect(weight.body["unit"] as? String == "kg")
        }
    }

    @Test("the bucket defaults to day and the window to the last 30 days, today included")
    func defaultWindow() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            try await upload(harness, [
                ("heart_rate", 60, Self.day(0) + "T00:00:00Z"),
                ("heart_rate", 70, Self.day(-29) + "T00:00:00Z"),
                ("heart_rate", 80, Self.day(-30) + "T23:59:59.999999Z"),
            ], token)
            let result = try await statistics(harness, token, "type=heart_rate")
            #expect(result.body["bucket"] as? String == "day")
            #expect(result.own.map(\.start) == [Self.day(-29), Self.day(0)])
            #expect(result.own.map(\.mean) == [70, 60])
            // `to` alone: the window is the 30 days ending there.
            let ending = try await statistics(harness, token, "type=heart_rate&to=\(Self.day(-1))")
            #expect(ending.own.map(\.start) == [Self.day(-30), Self.day(-29)])
        }
    }

    @Test("no data is an empty own list")
    func noData() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            let result = try await statistics(harness, token, "type=step_count")
            #expect(result.own.isEmpty)
            #expect(result.body["type"] as? String == "step_count")
            #expect(result.body["unit"] as? String == "steps")
            #expect(result.available == false)
            #expect(result.peers.isEmpty)
        }
    }

    // MARK: Validation and roles

    @Test("invalid query parameters are a 422 naming them")
    func invalidQuery() async throws {
        let cases = [
        ("type=heart_rate&from=2026-03-10&to=2026-03-09", "from"),
        ("type=heart_rate&from=2026-02-30", "from"),
        ("type=heart_rate&to=yesterday", "to"),
        ("type=heart_rate&from=2026-03-01T00:00:00Z", "from"),
        ("type=heart_rate&from=2010-01-01&to=2026-03-01", "from"),
        ("type=heart_rate&bucket=year", "bucket"),
        ("type=blood_sugar", "type"),
        ]
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            for (query, field) in cases {
                let response = try await harness.request(.get, "/v1/me/statistics?\(query)", token: token)
                #expect(response.status == .unprocessableContent, "\(query): \(harness.text(response))")
                #expect(response.headers[.contentType] == "application/problem+json", "\(query)")
                #expect(try harness.errorFields(response).contains(field), "\(query)")
            }
        }
    }

    @Test("a missing type is a 422")
    func missingType() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            let response = try await harness.request(.get, "/v1/me/statistics?bucket=day", token: token)
            #expect(response.status == .unprocessableContent, "\(harness.text(response))")
            #expect(response.headers[.contentType] == "application/problem+json")
        }
    }

    @Test("a company or an auditor gets 403; no token 401")
    func roles() async throws {
        try await TestHarness.run { harness in
            let company = try await harness.activeCompany()
            #expect(try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: company).status == .forbidden)
            let auditor = try await harness.activeAuditor()
            #expect(try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: auditor).status == .forbidden)
            #expect(try await harness.request(.get, "/v1/me/statistics?type=heart_rate").status == .unauthorized)
        }
    }

    // MARK: Peers

    @Test("the peer group names the caller's sex and ten-year band")
    func groupName() async throws {
        let cases = [
        ("F", 35, "women aged 30–39"), ("M", 35, "men aged 30–39"), ("F", 20, "women aged 20–29"), ("M", 49, "men aged 40–49"),
        ("F", 5, "women aged 0–9"),
        ]
        try await TestHarness.run { harness in
            for (sex, age, name) in cases {
                let birth = "\(Self.year - age)-01-01"
                let token = try await harness.activeUser(TestHarness.Person(
                    fiscalCode: TestHarness.uniqueFiscalCode(birthDate: birth, sex: sex), birthDate: birth, sex: sex))
                let result = try await statistics(harness, token, "type=heart_rate")
                #expect(result.group == name, "\(sex) \(age)")
            }
        }
    }

    @Test("with the default GROUP_MIN_COHORT, a handful of peers is not enough: available false and no buckets")
    func defaultCohortHidesPeers() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(Self.caller())
            for birth in Self.peerBirthDates {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                try await rollup(harness, peer, .heartRate, "2026-03-02", [70])
            }
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31")
            #expect(result.available == false)
            #expect(result.peers.isEmpty)
            #expect(result.group == "women aged 30–39")
        }
    }

    @Test("with k = 3 and enough peers: people, mean and percentiles per bucket; buckets with fewer than k peers are left out; the caller, men, other ages and other types do not count")
    func peersByDay() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }) { harness in
            let token = try await harness.activeUser(Self.caller())
            // The caller's own data, on every day (must never count as a peer).
            try await upload(harness, [
                ("heart_rate", 150, "2026-03-02T08:00:00Z"), ("heart_rate", 150, "2026-03-03T08:00:00Z"),
                ("heart_rate", 150, "2026-03-04T08:00:00Z"),
            ], token)
            let a = try await harness.insertPerson(birthDate: Self.peerBirthDates[0], sex: "F")
            let b = try await harness.insertPerson(birthDate: Self.peerBirthDates[1], sex: "F")
            let c = try await harness.insertPerson(birthDate: Self.peerBirthDates[2], sex: "F")
            // Peer d is a registered person who uploads through the API.
            let dBirth = Self.peerBirthDates[3]
            let d = try await harness.activeUser(TestHarness.Person(
                fiscalCode: TestHarness.uniqueFiscalCode(birthDate: dBirth, sex: "F"), birthDate: dBirth, sex: "F"))
            let man = try await harness.insertPerson(birthDate: "\(Self.year - 35)-02-02", sex: "M")
            let older = try await harness.insertPerson(birthDate: "\(Self.year - 45)-05-05", sex: "F")
            let younger = try await harness.insertPerson(birthDate: "\(Self.year - 25)-05-05", sex: "F")
            let otherType = try await harness.insertPerson(birthDate: Self.peerBirthDates[4], sex: "F")

            // 2 March: four peers.
            try await rollup(harness, a, .heartRate, "2026-03-02", [60])
            try await rollup(harness, b, .heartRate, "2026-03-02", [70, 80])
            try await rollup(harness, c, .heartRate, "2026-03-02", [90])
            try await upload(harness, [("heart_rate", 100, "2026-03-02T10:00:00Z")], d)
            // 3 March: two peers (plus the caller, a man, other ages and another type: not enough).
            try await rollup(harness, a, .heartRate, "2026-03-03", [50])
            try await rollup(harness, b, .heartRate, "2026-03-03", [60])
            for outsider in [man, older, younger] { try await rollup(harness, outsider, .heartRate, "2026-03-03", [70]) }
            try await rollup(harness, otherType, .weight, "2026-03-03", [70])
            // 4 March: three peers.
            try await rollup(harness, a, .heartRate, "2026-03-04", [65])
            try await rollup(harness, b, .heartRate, "2026-03-04", [66])
            try await rollup(harness, c, .heartRate, "2026-03-04", [67])
            // Outside the window.
            try await rollup(harness, a, .heartRate, "2026-03-08", [60])
            try await rollup(harness, b, .heartRate, "2026-03-08", [60])
            try await rollup(harness, c, .heartRate, "2026-03-08", [60])

            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-02&to=2026-03-07&bucket=day")
            #expect(result.available == true)
            #expect(result.group == "women aged 30–39")
            // Computed by hand: means 60, 75, 90, 100 → p10 at rank 0.3 = 64.5, p50 at 1.5 = 82.5, p90 at 2.7 = 97.
            #expect(result.peers == [
                PeerBucket(start: "2026-03-02", people: 4, mean: 81.25, p10: 64.5, p50: 82.5, p90: 97),
                PeerBucket(start: "2026-03-04", people: 3, mean: 66, p10: 65.2, p50: 66, p90: 66.8),
            ])
            #expect(result.own.map(\.start) == ["2026-03-02", "2026-03-03", "2026-03-04"])
            #expect(result.own.map(\.mean) == [150, 150, 150])
        }
    }

    @Test("a peer's mean over a week or month weighs every sample, not every day")
    func peersByWeekAndMonth() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }) { harness in
            let token = try await harness.activeUser(Self.caller())
            var ids: [String] = []
            for birth in Self.peerBirthDates.prefix(3) { ids.append(try await harness.insertPerson(birthDate: birth, sex: "F")) }
            // a: 3 samples of 60 on Monday and one of 100 on Tuesday → 70 (the mean of daily means would be 80).
            try await rollup(harness, ids[0], .heartRate, "2026-03-02", [60, 60, 60])
            try await rollup(harness, ids[0], .heartRate, "2026-03-03", [100])
            try await rollup(harness, ids[1], .heartRate, "2026-03-08", [80, 90])  // Sunday: still the week of 2 March
            try await rollup(harness, ids[2], .heartRate, "2026-03-05", [120])
            // The next week: only two peers.
            try await rollup(harness, ids[0], .heartRate, "2026-03-09", [70])
            try await rollup(harness, ids[1], .heartRate, "2026-03-10", [70])

            let weeks = try await statistics(harness, token, "type=heart_rate&from=2026-03-02&to=2026-03-15&bucket=week")
            #expect(weeks.available == true)
            #expect(weeks.peers == [Self.peerBucket("2026-03-02", [70, 85, 120])])
            #expect(weeks.peers.first.map { abs($0.p10 - 73) < 1e-9 && abs($0.p90 - 113) < 1e-9 } == true)

            let months = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31&bucket=month")
            // a: (180 + 100 + 70) / 5 = 70; b: (170 + 70) / 3 = 80; c: 120.
            #expect(months.peers == [Self.peerBucket("2026-03-01", [70, 80, 120])])
        }
    }

    @Test("enough peers overall but fewer than k in every bucket: available, with no buckets")
    func availableWithoutBuckets() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }) { harness in
            let token = try await harness.activeUser(Self.caller())
            for (index, birth) in Self.peerBirthDates.prefix(3).enumerated() {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                try await rollup(harness, peer, .heartRate, "2026-03-0\(2 + index)", [70])
            }
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31")
            #expect(result.available == true)
            #expect(result.peers.isEmpty)
            let months = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31&bucket=month")
            #expect(months.peers.map(\.people) == [3])
        }
    }

    @Test("two true peers plus someone who must not count is not enough for k = 3", arguments: [
        "the caller", "a man of the same age", "a woman of the next band", "a woman of the band below", "a peer with another type",
        "a peer with data outside the window", "a company account",
    ])
    func nonPeersDoNotCount(extra: String) async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }) { harness in
            let token = try await harness.activeUser(Self.caller())
            for birth in Self.peerBirthDates.prefix(2) {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                try await rollup(harness, peer, .heartRate, "2026-03-02", [70])
            }
            switch extra {
            case "the caller":
                try await upload(harness, [("heart_rate", 70, "2026-03-02T08:00:00Z")], token)
            case "a man of the same age":
                try await rollup(harness, try await harness.insertPerson(birthDate: "\(Self.year - 35)-01-01", sex: "M"), .heartRate, "2026-03-02", [70])
            case "a woman of the next band":
                try await rollup(harness, try await harness.insertPerson(birthDate: "\(Self.year - 41)-01-01", sex: "F"), .heartRate, "2026-03-02", [70])
            case "a woman of the band below":
                try await rollup(harness, try await harness.insertPerson(birthDate: "\(Self.year - 29)-12-31", sex: "F"), .heartRate, "2026-03-02", [70])
            case "a peer with another type":
                try await rollup(harness, try await harness.insertPerson(birthDate: Self.peerBirthDates[2], sex: "F"), .weight, "2026-03-02", [70])
            case "a peer with data outside the window":
                try await rollup(harness, try await harness.insertPerson(birthDate: Self.peerBirthDates[2], sex: "F"), .heartRate, "2026-04-01", [70])
            default:
                let company = try await harness.activeCompany()
                let id = try await harness.accountID(company)
                try await rollup(harness, id, .heartRate, "2026-03-02", [70])
            }
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31")
            #expect(result.available == false)
            #expect(result.peers.isEmpty)

            // A third true peer makes the group available, counting exactly three people.
            let third = try await harness.insertPerson(birthDate: Self.peerBirthDates[3], sex: "F")
            try await rollup(harness, third, .heartRate, "2026-03-02", [70])
            let now = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31")
            #expect(now.available == true)
            #expect(now.peers.map(\.people) == [3])
        }
    }

    @Test(
        "the age band follows birthdays: 30 today is in, 30 tomorrow is not; 40 today is out, 40 tomorrow is in",
        // On the 29th–31st the known month-end bug (see bandBirthDatesOnMonthEnds) would make this fail.
        .enabled(if: CalendarDate.today.day <= 28)
    )
    func bandBoundariesToday() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }) { harness in
            let token = try await harness.activeUser(Self.caller())
            let today = CalendarDate.today
            func yearsAgo(_ years: Int, plusDays days: Int) -> String {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = TimeZone(identifier: "UTC")!
                let birthday = calendar.date(from: DateComponents(year: today.year - years, month: today.month, day: today.day))!
                return Self.day(days, from: birthday)
            }
            let inside = [yearsAgo(30, plusDays: 0), yearsAgo(40, plusDays: 1)]
            let outside = [yearsAgo(30, plusDays: 1), yearsAgo(40, plusDays: 0)]
            for birth in inside + outside {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                try await rollup(harness, peer, .heartRate, "2026-03-02", [70])
            }
            // Two inside: not enough. One more inside makes three, so exactly the two borderline insiders counted.
            #expect(try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31").available == false)
            let third = try await harness.insertPerson(birthDate: Self.peerBirthDates[0], sex: "F")
            try await rollup(harness, third, .heartRate, "2026-03-02", [70])
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-03-31")
            #expect(result.available == true)
            #expect(result.peers.map(\.people) == [3])
        }
    }

    @Test("the band's birth-date range agrees with the age of everyone born near its edges, also on month ends and a leap day")
    func bandBirthDatesOnMonthEnds() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for todayText in ["2026-03-31", "2026-01-29", "2026-12-30", "2028-02-29", "2026-11-21"] {
            let today = try #require(CalendarDate(iso: todayText))
            let group = Statistics.PeerGroup(sex: .female, birthDate: CalendarDate(year: today.year - 35, month: 1, day: 1)!, today: today)
            let range = group.birthDates(today: today)
            let todayDate = calendar.date(from: DateComponents(year: today.year, month: today.month, day: today.day))!
            for years in [30, 40] {
                for offset in -4...4 {
                    let birth = calendar.date(byAdding: DateComponents(year: -years, day: offset), to: todayDate)!
                    let birthDay = CalendarDate(birth, in: TimeZone(identifier: "UTC")!)
                    let ageBand = Statistics.PeerGroup(sex: .female, birthDate: birthDay, today: today).ageFrom
                    let inRange = birthDay > range.after && birthDay <= range.onOrBefore
                    #expect(inRange == (ageBand == 30), "today \(todayText), born \(birthDay): band \(ageBand), in range \(inRange)")
                }
            }
        }
    }
}
