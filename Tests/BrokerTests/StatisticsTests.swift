import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `GET /v1/me/statistics`: the caller's own buckets, and their peers' read from the shared noisy monthly
/// cells (exact here: the tests that check figures inject `NoNoise`), gated on k. Peer data is in the last
/// closed month; attacks on these figures are in `PeerStatisticsPrivacyTests`.
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
        var month: String
        var people: Int
        var peopleMargin95: Double
        var p50: Double?
        var description: String { "\(start) (\(month)) people=\(people)±\(peopleMargin95) p50=\(p50.map { "\($0)" } ?? "nil")" }
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
            OwnBucket(
                start: $0["start"] as? String ?? "?", count: $0["count"] as? Int ?? -1, mean: $0["mean"] as? Double ?? .nan,
                min: $0["min"] as? Double ?? .nan, max: $0["max"] as? Double ?? .nan)
        }
        let peers = body["peers"] as? [String: Any] ?? [:]
        let peerBuckets = (peers["buckets"] as? [[String: Any]] ?? []).map {
            PeerBucket(
                start: $0["start"] as? String ?? "?", month: $0["month"] as? String ?? "?", people: $0["people"] as? Int ?? -1,
                peopleMargin95: ($0["peopleMargin95"] as? NSNumber)?.doubleValue ?? .nan, p50: ($0["p50"] as? NSNumber)?.doubleValue)
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

    /// A daily rollup written directly, as ingest would leave it for these values.
    private func rollup(_ harness: TestHarness, _ userID: String, _ type: SampleType, _ day: String, _ values: [Double]) async throws {
        let sum = values.reduce(0, +)
        let squares = values.reduce(0) { $0 + $1 * $1 }
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

    // MARK: Own

    // These tests do not look at peers, but their requests publish the window's closed months when they are
    // among the last two: without noise that is cheap.

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
        try await TestHarness.run(noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            try await upload(harness, Self.ownSamples, token)
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-04-01&bucket=day")
            #expect(
                result.own == [
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
        try await TestHarness.run(noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            try await upload(harness, Self.ownSamples, token)
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-04-01&bucket=week")
            #expect(
                result.own == [
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
        try await TestHarness.run(noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            try await upload(harness, Self.ownSamples, token)
            let result = try await statistics(harness, token, "type=heart_rate&from=2026-03-01&to=2026-04-01&bucket=month")
            #expect(
                result.own == [
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
        try await TestHarness.run(noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            try await upload(
                harness,
                [
                    ("heart_rate", 60, StatisticsFixtures.day(0) + "T00:00:00Z"),
                    ("heart_rate", 70, StatisticsFixtures.day(-29) + "T00:00:00Z"),
                    ("heart_rate", 80, StatisticsFixtures.day(-30) + "T23:59:59.999999Z"),
                ], token)
            let result = try await statistics(harness, token, "type=heart_rate")
            #expect(result.body["bucket"] as? String == "day")
            #expect(result.own.map(\.start) == [StatisticsFixtures.day(-29), StatisticsFixtures.day(0)])
            #expect(result.own.map(\.mean) == [70, 60])
            // `to` alone: the window is the 30 days ending there.
            let ending = try await statistics(harness, token, "type=heart_rate&to=\(StatisticsFixtures.day(-1))")
            #expect(ending.own.map(\.start) == [StatisticsFixtures.day(-30), StatisticsFixtures.day(-29)])
        }
    }

    @Test("no data is an empty own list")
    func noData() async throws {
        try await TestHarness.run(noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
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
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            for (query, field) in cases {
                let response = try await harness.request(.get, "/v1/me/statistics?\(query)", token: token)
                #expect(response.status == .unprocessableContent, "\(query): \(harness.text(response))")
                #expect(response.headers[.contentType] == "application/problem+json", "\(query)")
                #expect(try harness.errorFields(response).contains(field), "\(query)")
            }
        }
    }

    /// Issue 17, item 12: ten years of day buckets (3,660 own and peer buckets) was one cheap request.
    @Test("the window is bounded by its buckets: 400 days of days, 2,800 of weeks, ten years of months; one day more is a 422 naming from")
    func windowBoundedByBuckets() async throws {
        try await TestHarness.run(configure: { $0.rateLimits = .unlimited }) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            // (bucket, the longest window's first day, to = 2026-03-31)
            let longest = [("day", "2025-02-25"), ("week", "2018-08-01"), ("month", "2016-03-23")]
            for (bucket, from) in longest {
                let first = CalendarDate(iso: from)!
                let last = CalendarDate(iso: "2026-03-31")!
                let allowed = try #require(Statistics.Bucket(rawValue: bucket)).maximumWindowDays
                try #require(last.dayNumber - first.dayNumber + 1 == allowed, "\(bucket): the test's window is not the longest")
                let fits = try await harness.request(
                    .get, "/v1/me/statistics?type=heart_rate&bucket=\(bucket)&from=\(from)&to=2026-03-31", token: token)
                #expect(fits.status == .ok, "\(bucket) over \(allowed) days: \(harness.text(fits))")
                let dayBefore = first.adding(days: -1).description
                let tooLong = try await harness.request(
                    .get, "/v1/me/statistics?type=heart_rate&bucket=\(bucket)&from=\(dayBefore)&to=2026-03-31", token: token)
                #expect(tooLong.status == .unprocessableContent, "\(bucket) over \(allowed + 1) days: \(tooLong.status)")
                #expect(try harness.errorFields(tooLong) == ["from"])
            }
        }
    }

    @Test("statistics are rate limited per person: over the budget 429 with Retry-After; another person still gets answers")
    func rateLimited() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.statistics: .perMinute(3)])) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            for _ in 0..<3 {
                #expect(try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: token).status == .ok)
            }
            let refused = try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: token)
            try RateLimitFixtures.expectRateLimited(refused, harness)
            var other = TestHarness.Person()
            other.fiscalCode = TestHarness.uniqueFiscalCode()
            let otherToken = try await harness.activeUser(other)
            #expect(try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: otherToken).status == .ok)
            clock.advance(by: .seconds(20))
            #expect(try await harness.request(.get, "/v1/me/statistics?type=heart_rate", token: token).status == .ok)
        }
    }

    @Test("a missing type is a 422")
    func missingType() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
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

    /// The newest closed month (its first day), a day `offset` days into it, and its last day.
    static var month: CalendarDate { PeerStatistics.lastClosedMonth(at: Date(), latenessHours: PrivacySettings().latenessHours) }
    static func day(_ offset: Int) -> String { month.adding(days: offset).description }
    static var monthEnd: CalendarDate { Statistics.Bucket.month.next(after: month).adding(days: -1) }
    /// `peopleMargin95` at the default peer cell loss: 1.96 σ of the count's noise.
    static var peopleMargin: Double {
        (1.96 * CellCalibration(type: .heartRate, loss: PrivacySettings().peerCellLoss, split: .peerCell).countStandardDeviation)
            .rounded(toMultipleOf: 0.1)
    }

    @Test("the peer group names the caller's sex and ten-year band")
    func groupName() async throws {
        let cases = [
            ("F", 35, "women aged 30–39"), ("M", 35, "men aged 30–39"), ("F", 20, "women aged 20–29"), ("M", 49, "men aged 40–49"),
            ("F", 5, "women aged 0–9"),
        ]
        try await TestHarness.run { harness in
            for (sex, age, name) in cases {
                let birth = "\(StatisticsFixtures.year - age)-01-01"
                let token = try await harness.activeUser(
                    TestHarness.Person(
                        fiscalCode: TestHarness.uniqueFiscalCode(birthDate: birth, sex: sex), birthDate: birth, sex: sex))
                let result = try await statistics(harness, token, "type=heart_rate")
                #expect(result.group == name, "\(sex) \(age)")
            }
        }
    }

    @Test("with the default GROUP_MIN_COHORT, a handful of peers is not enough: available false and no buckets")
    func defaultCohortHidesPeers() async throws {
        try await TestHarness.run(noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            for birth in StatisticsFixtures.peerBirthDates {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                try await rollup(harness, peer, .heartRate, Self.day(5), [70])
            }
            let result = try await statistics(harness, token, "type=heart_rate&from=\(Self.day(0))&to=\(Self.monthEnd)")
            #expect(result.available == false)
            #expect(result.peers.isEmpty)
            #expect(result.group == "women aged 30–39")
        }
    }

    @Test(
        "with k = 3, every day, week and month bucket of the closed month carries its month's cell: people and their margin, and no median from five people (its margin misses the target); the current month carries the closed month's figures, never its own; men, other ages and other types do not count, the caller does"
    )
    func peersByMonth() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            let a = try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[0], sex: "F")
            let b = try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[1], sex: "F")
            let c = try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[2], sex: "F")
            // Peer d is a registered person who uploads through the API.
            let dBirth = StatisticsFixtures.peerBirthDates[3]
            let d = try await harness.activeUser(
                TestHarness.Person(
                    fiscalCode: TestHarness.uniqueFiscalCode(birthDate: dBirth, sex: "F"), birthDate: dBirth, sex: "F"))
            let man = try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 35)-02-02", sex: "M")
            let older = try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 45)-05-05", sex: "F")
            let younger = try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 25)-05-05", sex: "F")
            let otherType = try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[4], sex: "F")
            try await rollup(harness, a, .heartRate, Self.day(1), [60])
            try await rollup(harness, a, .heartRate, Self.day(9), [64])
            try await rollup(harness, b, .heartRate, Self.day(2), [70, 80])
            try await rollup(harness, c, .heartRate, Self.day(20), [90])
            try await upload(harness, [("heart_rate", 100, "\(Self.day(3))T10:00:00Z")], d)
            try await upload(harness, [("heart_rate", 150, "\(Self.day(4))T08:00:00Z")], token)
            for outsider in [man, older, younger] { try await rollup(harness, outsider, .heartRate, Self.day(2), [70]) }
            try await rollup(harness, otherType, .weight, Self.day(2), [70])
            // The current month has not closed: its own data is never in peer figures, however many peers; its
            // buckets carry the last closed month's figures (people 5, not 8), naming that month.
            let today = CalendarDate.today
            for peer in [a, b, c] { try await rollup(harness, peer, .heartRate, today.description, [80]) }

            let window = "from=\(Self.day(0))&to=\(today)"
            let days = try await statistics(harness, token, "type=heart_rate&\(window)&bucket=day")
            #expect(days.available == true)
            #expect(days.group == "women aged 30–39")
            let month = Self.month.description
            let expected = Statistics.Bucket.day.starts(from: Self.month, to: today).map {
                PeerBucket(start: $0.description, month: month, people: 5, peopleMargin95: Self.peopleMargin, p50: nil)
            }
            #expect(days.peers == expected)
            #expect(days.peers.contains { $0.start > Self.monthEnd.description })
            let weeks = try await statistics(harness, token, "type=heart_rate&\(window)&bucket=week")
            #expect(
                weeks.peers.map(\.start) == Statistics.Bucket.week.starts(from: Self.month, to: today).filter { $0 >= Self.month }.map(\.description))
            #expect(weeks.peers.allSatisfy { $0.people == 5 && $0.month == month })
            let months = try await statistics(harness, token, "type=heart_rate&\(window)&bucket=month")
            #expect(
                months.peers
                    == Statistics.Bucket.month.starts(from: Self.month, to: today).map {
                        PeerBucket(start: $0.description, month: month, people: 5, peopleMargin95: Self.peopleMargin, p50: nil)
                    })
        }
    }

    @Test("the caller is one of her band's peers: two others and she make three; each is one person however many days she has")
    func callerCounts() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            for birth in StatisticsFixtures.peerBirthDates.prefix(2) {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                for offset in 0..<10 { try await rollup(harness, peer, .heartRate, Self.day(offset), [70]) }
            }
            try await upload(harness, [("heart_rate", 73, "\(Self.day(4))T12:00:00Z")], token)
            let result = try await statistics(harness, token, "type=heart_rate&from=\(Self.day(0))&to=\(Self.day(0))")
            #expect(result.peers.map(\.people) == [3])
        }
    }

    @Test(
        "two true peers plus someone who must not count is not enough for k = 3; a third true peer is",
        arguments: [
            "a man of the same age", "a woman of the next band", "a woman of the band below", "a peer with another type",
            "a peer with data in another month", "a company account", "a third true peer",
        ])
    func nonPeersDoNotCount(extra: String) async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            // The caller and one true peer; the extra would make the third.
            let caller = try await harness.activeUser(StatisticsFixtures.caller())
            let day = Self.day(5)
            try await upload(harness, [("heart_rate", 70, "\(day)T12:00:00Z")], caller)
            try await rollup(
                harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[0], sex: "F"), .heartRate, day, [70])
            switch extra {
            case "a man of the same age":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 35)-01-01", sex: "M"), .heartRate, day, [70])
            case "a woman of the next band":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 42)-01-01", sex: "F"), .heartRate, day, [70])
            case "a woman of the band below":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 28)-12-31", sex: "F"), .heartRate, day, [70])
            case "a peer with another type":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[2], sex: "F"), .weight, day, [70])
            case "a peer with data in another month":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[2], sex: "F"), .heartRate,
                    Self.month.adding(days: -1).description, [70])
            case "a company account":
                let company = try await harness.activeCompany()
                try await rollup(harness, try await harness.accountID(company), .heartRate, day, [70])
            default:
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[2], sex: "F"), .heartRate, day, [70])
            }
            let result = try await statistics(harness, caller, "type=heart_rate&from=\(Self.day(0))&to=\(Self.monthEnd)&bucket=month")
            if extra == "a third true peer" {
                #expect(result.peers.map(\.people) == [3])
            } else {
                #expect(result.available == false, "\(result.peers)")
                #expect(result.peers.isEmpty)
            }
        }
    }

    @Test("a month's band is the peers' age on its first day: 30 that day is in, 30 the next day is not; 40 that day is out, 40 the next day is in")
    func bandByAgeOnTheMonthsFirstDay() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            let first = Self.month
            func born(_ years: Int, daysLater: Int) -> String {
                CalendarDate(year: first.year - years, month: first.month, day: 1)!.adding(days: daysLater).description
            }
            // All of them have data later in the month, when the ones born a day later have had their birthday.
            for birth in [born(30, daysLater: 0), born(40, daysLater: 1), born(30, daysLater: 1), born(40, daysLater: 0)] {
                try await rollup(harness, try await harness.insertPerson(birthDate: birth, sex: "F"), .heartRate, Self.day(10), [70])
            }
            // Two inside, and one more peer: three. Had either outsider counted, four or five.
            try await rollup(
                harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[0], sex: "F"), .heartRate, Self.day(10), [70])
            let result = try await statistics(harness, token, "type=heart_rate&from=\(Self.day(0))&to=\(Self.monthEnd)&bucket=month")
            #expect(result.peers.map(\.people) == [3])
        }
    }

    @Test("the console's chart draws the peers' median as a monthly step line, only over the person's own days, inside the axes")
    func chartWithSharedCells() throws {
        let day = CalendarDate(iso: "2026-03-29")!
        let own = (0..<5).map { Statistics.OwnBucket(start: day.adding(days: $0), count: 3, days: 1, mean: 70, min: 60, max: 80) }
        // Every day carries its month's figures: 71 in March, 74 in April; days before and after the person's own too.
        let peers = (-5..<8).map { offset -> Statistics.PeerBucket in
            let start = day.adding(days: offset)
            let month = Statistics.Bucket.month.start(of: start)
            return Statistics.PeerBucket(
                start: start, month: month, people: 1000, peopleMargin95: 99, p10: nil, p50: month.month == 3 ? 71 : 74, p90: nil,
                p50Margin95: 0.8)
        }
        let group = Statistics.PeerGroup(sex: .female, birthDate: CalendarDate(iso: "1990-01-01")!, today: day)
        let chart = HealthChart(
            statistics: Statistics(
                type: .heartRate, timeZone: "UTC", bucket: .day, own: own, group: group, peersAvailable: true, peerBuckets: peers))
        let svg = chart.svg
        let line = try #require(svg.components(separatedBy: #"<polyline class="peer" points=""#).dropFirst().first?.prefix { $0 != "\"" })
        let points = line.split(separator: " ").map { $0.split(separator: ",").compactMap { Double($0) } }
        // 29, 30, 31 March, then a step at 1 April (March's level, then April's), and 2 April.
        #expect(points.count == 6, "\(line)")
        #expect(points.allSatisfy { $0[0] >= HealthChart.left && $0[0] <= HealthChart.width - HealthChart.right }, "\(points)")
        #expect(points[3][0] == points[4][0] && points[2][1] == points[3][1] && points[4][1] < points[3][1], "a vertical step up: \(points)")
        #expect((chart.values["rows"] as? [[String: String]])?.map { $0["peerMedian"] } == ["71", "71", "71", "74", "74"])
        #expect(chart.values["peersAvailable"] as? Bool == true)
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
