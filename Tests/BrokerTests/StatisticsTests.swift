import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `GET /v1/me/statistics`: the caller's own buckets, and their peers' composed from the shared noisy day
/// cells (exact here: the tests that check figures inject `NoNoise`), gated on k. Peer data is on closed
/// days, at least three days back; attacks on these figures are in `PeerStatisticsPrivacyTests`.
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
        var days: Int
        var description: String { "\(start) people=\(people) mean=\(mean) p10=\(p10) p50=\(p50) p90=\(p90) days=\(days)" }

        static func == (a: Self, b: Self) -> Bool { a.isClose(to: b, within: 1e-6) }

        func isWithinAHundredth(of other: Self) -> Bool { isClose(to: other, within: 0.0100001) }

        func isClose(to b: Self, within tolerance: Double) -> Bool {
            start == b.start && people == b.people && days == b.days
                && [(mean, b.mean), (p10, b.p10), (p50, b.p50), (p90, b.p90)].allSatisfy { abs($0 - $1) < tolerance }
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
            OwnBucket(
                start: $0["start"] as? String ?? "?", count: $0["count"] as? Int ?? -1, mean: $0["mean"] as? Double ?? .nan,
                min: $0["min"] as? Double ?? .nan, max: $0["max"] as? Double ?? .nan)
        }
        let peers = body["peers"] as? [String: Any] ?? [:]
        let peerBuckets = (peers["buckets"] as? [[String: Any]] ?? []).map {
            PeerBucket(
                start: $0["start"] as? String ?? "?", people: $0["people"] as? Int ?? -1,
                mean: ($0["mean"] as? NSNumber)?.doubleValue ?? .nan, p10: ($0["p10"] as? NSNumber)?.doubleValue ?? .nan,
                p50: ($0["p50"] as? NSNumber)?.doubleValue ?? .nan, p90: ($0["p90"] as? NSNumber)?.doubleValue ?? .nan,
                days: $0["days"] as? Int ?? -1)
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

    // These tests do not look at peers, but their requests publish the window's closed days: without noise
    // that is cheap (the exact sampler draws some 18,000 values per day).

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

    static func hundredths(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    /// The noise-free heart-rate bucket of `days` published days holding these person-day figures (each a
    /// multiple of 0.01, so the centred sum is exact): people the mean day's count, the mean over every
    /// person-day, percentiles from their histogram; nil when the mean day has fewer than k.
    static func expectedBucket(_ start: String, days: Int, figures: [Double], k: Int) -> PeerBucket? {
        guard !figures.isEmpty, figures.count >= k * days else { return nil }
        func percentile(_ q: Double) -> Double { GroupFixtures.gridPercentile(q, of: figures, type: .heartRate) }
        return PeerBucket(
            start: start, people: Int((Double(figures.count) / Double(days)).rounded()),
            mean: hundredths(figures.reduce(0, +) / Double(figures.count)),
            p10: percentile(0.1), p50: percentile(0.5), p90: percentile(0.9), days: days)
    }

    /// The offset from today of the Monday on or before the day `offset` days from today.
    static func monday(onOrBefore offset: Int) -> Int {
        let dayNumber = CalendarDate(iso: StatisticsFixtures.day(offset))!.dayNumber
        return offset - (dayNumber + 3) % 7  // 1970-01-05, day number 4, was a Monday
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
                try await rollup(harness, peer, .heartRate, StatisticsFixtures.day(-5), [70])
            }
            let result = try await statistics(harness, token, "type=heart_rate&from=\(StatisticsFixtures.day(-10))&to=\(StatisticsFixtures.day(0))")
            #expect(result.available == false)
            #expect(result.peers.isEmpty)
            #expect(result.group == "women aged 30–39")
        }
    }

    @Test(
        "with k = 3, per closed day: people, mean and histogram percentiles; a day with fewer than k peers is left out, and so are today and yesterday (not closed); men, other ages and other types do not count, the caller does"
    )
    func peersByDay() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            let (d1, d2, d3) = (StatisticsFixtures.day(-6), StatisticsFixtures.day(-5), StatisticsFixtures.day(-4))
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

            // d1: four peers and the caller, who is one of her band like everyone else.
            try await rollup(harness, a, .heartRate, d1, [60])
            try await rollup(harness, b, .heartRate, d1, [70, 80])
            try await rollup(harness, c, .heartRate, d1, [90])
            try await upload(harness, [("heart_rate", 100, "\(d1)T10:00:00Z")], d)
            try await upload(harness, [("heart_rate", 150, "\(d1)T08:00:00Z")], token)
            // d2: two peers (plus a man, other ages and another type: not enough).
            try await rollup(harness, a, .heartRate, d2, [50])
            try await rollup(harness, b, .heartRate, d2, [60])
            for outsider in [man, older, younger] { try await rollup(harness, outsider, .heartRate, d2, [70]) }
            try await rollup(harness, otherType, .weight, d2, [70])
            // d3: three peers.
            try await rollup(harness, a, .heartRate, d3, [65])
            try await rollup(harness, b, .heartRate, d3, [66])
            try await rollup(harness, c, .heartRate, d3, [67])
            // Yesterday and today have not closed: never in peer figures, however many peers.
            for offset in [-1, 0] {
                for peer in [a, b, c] { try await rollup(harness, peer, .heartRate, StatisticsFixtures.day(offset), [80]) }
            }
            // Outside the window.
            for peer in [a, b, c] { try await rollup(harness, peer, .heartRate, StatisticsFixtures.day(-8), [60]) }

            let result = try await statistics(
                harness, token, "type=heart_rate&from=\(StatisticsFixtures.day(-7))&to=\(StatisticsFixtures.day(0))&bucket=day")
            #expect(result.available == true)
            #expect(result.group == "women aged 30–39")
            // By hand. Heart rate's bins are 3 beats/min wide from 40. d1: 60, 75, 90, 100, 150 are in bins 6, 11,
            // 16, 20, 36; p10 (rank 0.5 of 5) is half-way into bin 6: 40 + 3 × 6.5 = 59.5; p50 (2.5) half-way into
            // bin 16: 89.5; p90 (4.5) half-way into bin 36: 149.5. d3: 65 and 66 in bin 8, 67 in bin 9: p10 (0.3)
            // = 40 + 3 × (8 + 0.3/2) = 64.45, p50 (1.5) = 40 + 3 × 8.75 = 66.25, p90 (2.7) = 40 + 3 × 9.7 = 69.1.
            #expect(
                result.peers == [
                    PeerBucket(start: d1, people: 5, mean: 95, p10: 59.5, p50: 89.5, p90: 149.5, days: 1),
                    PeerBucket(start: d3, people: 3, mean: 66, p10: 64.45, p50: 66.25, p90: 69.1, days: 1),
                ])
            #expect(
                result.peers
                    == [
                        Self.expectedBucket(d1, days: 1, figures: [60, 75, 90, 100, 150], k: 3),
                        Self.expectedBucket(d3, days: 1, figures: [65, 66, 67], k: 3),
                    ].compactMap { $0 })
            // Every bucket says how far the noise may have moved it.
            let buckets = try #require(((result.body["peers"] as? [String: Any])?["buckets"]) as? [[String: Any]])
            #expect(buckets.allSatisfy { (($0["meanMargin95"] as? NSNumber)?.doubleValue ?? 0) > 0 && $0["peopleMargin95"] is NSNumber })
            #expect(result.own.map(\.start) == [d1])
        }
    }

    @Test("a week or a month composes its days: the mean weighs every peer-day, people is the mean day's count, and k applies to that mean day")
    func peersByWeekAndMonth() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            var ids: [String] = []
            for birth in StatisticsFixtures.peerBirthDates.prefix(3) { ids.append(try await harness.insertPerson(birthDate: birth, sex: "F")) }
            // Two whole closed weeks, Monday to Sunday.
            let monday = Self.monday(onOrBefore: -16)
            var figures: [String: [Double]] = [:]
            // Week 1: every peer every day. a: three readings of 60 and one of 100 on Monday (that day's
            // figure is 70), 60 on the other days; b 80 and c 120 every day.
            for offset in monday..<(monday + 7) {
                let day = StatisticsFixtures.day(offset)
                try await rollup(harness, ids[0], .heartRate, day, offset == monday ? [60, 60, 60, 100] : [60])
                try await rollup(harness, ids[1], .heartRate, day, [80])
                try await rollup(harness, ids[2], .heartRate, day, [120])
                figures[day] = [offset == monday ? 70 : 60, 80, 120]
            }
            // Week 2: each peer on two days only: three peers in the week, but about one on its mean day.
            for (index, offset) in [monday + 7, monday + 8, monday + 9, monday + 10, monday + 11, monday + 12].enumerated() {
                try await rollup(harness, ids[index % 3], .heartRate, StatisticsFixtures.day(offset), [70])
                figures[StatisticsFixtures.day(offset)] = [70]
            }
            let window = "from=\(StatisticsFixtures.day(monday))&to=\(StatisticsFixtures.day(monday + 13))"

            let weeks = try await statistics(harness, token, "type=heart_rate&\(window)&bucket=week")
            #expect(weeks.available == true)
            // By hand: 21 peer-days, mean (70 + 6 × 60 + 7 × 80 + 7 × 120) / 21 = 87.14; bins 6 (60) ×6, 10 (70) ×1,
            // 13 (80) ×7, 26 (120) ×7: p10 (rank 2.1) = 40 + 3 × (6 + 2.1/6) = 59.05, p50 (10.5) = 40 + 3 × 13.5 =
            // 80.5, p90 (18.9) = 40 + 3 × 26.7 = 120.1.
            #expect(
                weeks.peers == [PeerBucket(start: StatisticsFixtures.day(monday), people: 3, mean: 87.14, p10: 59.05, p50: 80.5, p90: 120.1, days: 7)]
            )

            // Months: each month bucket composes the window's days in it and starts on its first. Week 1 alone
            // has three peers every day, so whichever months it spans are shown; over both weeks a month is
            // shown only if its mean day still has three (it depends on where the month ends).
            for last in [monday + 6, monday + 13] {
                let months = try await statistics(
                    harness, token, "type=heart_rate&from=\(StatisticsFixtures.day(monday))&to=\(StatisticsFixtures.day(last))&bucket=month")
                var byMonth: [String: (days: Int, figures: [Double])] = [:]
                for offset in monday...last {
                    let day = StatisticsFixtures.day(offset)
                    let start = String(day.prefix(8)) + "01"
                    byMonth[start, default: (0, [])].days += 1
                    byMonth[start, default: (0, [])].figures += figures[day] ?? []
                }
                let expected = byMonth.keys.sorted().compactMap { start in
                    Self.expectedBucket(start, days: byMonth[start]!.days, figures: byMonth[start]!.figures, k: 3)
                }
                // Within a hundredth: a mean or percentile on an exact half-hundredth may round either way.
                #expect(
                    months.peers.count == expected.count && zip(months.peers, expected).allSatisfy { $0.isWithinAHundredth(of: $1) },
                    "\(months.peers) ≠ \(expected)")
                if last == monday + 6 { #expect(!months.peers.isEmpty) }
            }
        }
    }

    @Test("peers spread over the days so that no day reaches k: nothing is shown, not even their month, and available is false")
    func spreadPeersShowNothing() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            for (index, birth) in StatisticsFixtures.peerBirthDates.prefix(3).enumerated() {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                try await rollup(harness, peer, .heartRate, StatisticsFixtures.day(-5 - index), [70])
            }
            for bucket in ["day", "week", "month"] {
                let result = try await statistics(
                    harness, token, "type=heart_rate&from=\(StatisticsFixtures.day(-9))&to=\(StatisticsFixtures.day(-3))&bucket=\(bucket)")
                #expect(result.available == false, "\(bucket)")
                #expect(result.peers.isEmpty, "\(bucket)")
            }
        }
    }

    @Test("the caller is one of her band's peers: two others and she make three")
    func callerCounts() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            for birth in StatisticsFixtures.peerBirthDates.prefix(2) {
                try await rollup(harness, try await harness.insertPerson(birthDate: birth, sex: "F"), .heartRate, StatisticsFixtures.day(-4), [70])
            }
            try await upload(harness, [("heart_rate", 73, "\(StatisticsFixtures.day(-4))T12:00:00Z")], token)
            let result = try await statistics(harness, token, "type=heart_rate&from=\(StatisticsFixtures.day(-6))&to=\(StatisticsFixtures.day(-3))")
            #expect(result.peers.map(\.people) == [3])
            #expect(result.peers.map(\.mean) == [71])
        }
    }

    @Test(
        "two true peers plus someone who must not count is not enough for k = 3; three true peers are",
        arguments: [
            "a man of the same age", "a woman of the next band", "a woman of the band below", "a peer with another type",
            "a peer with data outside the window", "a company account",
        ])
    func nonPeersDoNotCount(extra: String) async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            // Two true peers and the extra on `short`; three true peers on `full` (a published day is never
            // recomputed, so everything is in place before the first request).
            let short = StatisticsFixtures.day(-5)
            let full = StatisticsFixtures.day(-4)
            for birth in StatisticsFixtures.peerBirthDates.prefix(2) {
                let peer = try await harness.insertPerson(birthDate: birth, sex: "F")
                try await rollup(harness, peer, .heartRate, short, [70])
                try await rollup(harness, peer, .heartRate, full, [70])
            }
            try await rollup(
                harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[3], sex: "F"), .heartRate, full, [70])
            switch extra {
            case "a man of the same age":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 35)-01-01", sex: "M"), .heartRate, short, [70])
            case "a woman of the next band":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 41)-01-01", sex: "F"), .heartRate, short, [70])
            case "a woman of the band below":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: "\(StatisticsFixtures.year - 29)-12-31", sex: "F"), .heartRate, short, [70])
            case "a peer with another type":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[2], sex: "F"), .weight, short, [70])
            case "a peer with data outside the window":
                try await rollup(
                    harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[2], sex: "F"), .heartRate,
                    StatisticsFixtures.day(-8), [70])
            default:
                let company = try await harness.activeCompany()
                let id = try await harness.accountID(company)
                try await rollup(harness, id, .heartRate, short, [70])
            }
            let result = try await statistics(harness, token, "type=heart_rate&from=\(StatisticsFixtures.day(-7))&to=\(StatisticsFixtures.day(-3))")
            #expect(result.available == true)
            #expect(result.peers.map(\.start) == [full])
            #expect(result.peers.map(\.people) == [3])
        }
    }

    @Test("a day's band is the peers' age on that day: 30 that day is in, 30 the next day is not; 40 that day is out, 40 the next day is in")
    func bandByAgeOnTheDay() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(StatisticsFixtures.caller())
            // A closed day with no month-end or leap-day ambiguity in "the same date, N years earlier".
            var offset = -4
            while CalendarDate(iso: StatisticsFixtures.day(offset))!.day > 28 { offset -= 1 }
            let day = CalendarDate(iso: StatisticsFixtures.day(offset))!
            func born(_ years: Int, daysLater: Int) -> String {
                CalendarDate(year: day.year - years, month: day.month, day: day.day)!.adding(days: daysLater).description
            }
            for birth in [born(30, daysLater: 0), born(40, daysLater: 1), born(30, daysLater: 1), born(40, daysLater: 0)] {
                try await rollup(harness, try await harness.insertPerson(birthDate: birth, sex: "F"), .heartRate, day.description, [70])
            }
            // Two inside, and one more peer: three. Had either outsider counted, four or five.
            try await rollup(
                harness, try await harness.insertPerson(birthDate: StatisticsFixtures.peerBirthDates[0], sex: "F"), .heartRate, day.description, [70])
            let result = try await statistics(harness, token, "type=heart_rate&from=\(day.adding(days: -1))&to=\(day.adding(days: 1))")
            #expect(result.peers.map(\.start) == [day.description])
            #expect(result.peers.map(\.people) == [3])
        }
    }

    @Test("the console's chart draws the peers' median from shared cells only over the person's own days, inside the axes")
    func chartWithSharedCells() throws {
        let day = CalendarDate(iso: "2026-03-10")!
        let own = (0..<3).map { Statistics.OwnBucket(start: day.adding(days: $0), count: 3, days: 1, mean: 70, min: 60, max: 80) }
        // Shared cells exist for every closed day, before and after the person's own data too.
        let peers = (-5..<6).map {
            Statistics.PeerBucket(
                start: day.adding(days: $0), people: 1000, mean: 72, p10: 60, p50: 71 + Double($0), p90: 85, days: 1,
                meanMargin95: 15.9, peopleMargin95: 346.6)
        }
        let group = Statistics.PeerGroup(sex: .female, birthDate: CalendarDate(iso: "1990-01-01")!, today: day)
        let chart = HealthChart(
            statistics: Statistics(
                type: .heartRate, timeZone: "UTC", bucket: .day, own: own, group: group, peersAvailable: true, peerBuckets: peers))
        let svg = chart.svg
        let line = try #require(svg.components(separatedBy: #"<polyline class="peer" points=""#).dropFirst().first?.prefix { $0 != "\"" })
        let xs = line.split(separator: " ").compactMap { Double($0.split(separator: ",")[0]) }
        #expect(xs.count == 3)
        #expect(xs.allSatisfy { $0 >= HealthChart.left && $0 <= HealthChart.width - HealthChart.right }, "\(xs)")
        #expect((chart.values["rows"] as? [[String: String]])?.map { $0["peerMedian"] } == ["71", "72", "73"])
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
