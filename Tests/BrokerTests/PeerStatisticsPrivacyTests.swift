import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issues 16 and 32: peer statistics on `GET /v1/me/statistics` come from shared monthly cells, published
/// once per closed month, and must not reveal a person — neither by differencing windows, nor with k − 1
/// cheap accounts, nor by late uploads or erasures moving a published figure — while showing only figures
/// within their type's accuracy target. Noise comes from the seeded exact samplers (calibrated as the
/// secure source is, but the same on every run) or `NoNoise` where figures must be exact.
@Suite("Peer statistics privacy", .serialized)
struct PeerStatisticsPrivacyTests {
    /// A woman aged 35 this whole year: her band is "women aged 30–39".
    static func caller() -> TestHarness.Person { StatisticsFixtures.caller() }
    static var peerBirthDate: String { StatisticsFixtures.peerBirthDates[0] }

    /// The newest closed month now (its first day), and a day `offset` days into it.
    static var month: CalendarDate { PeerStatistics.lastClosedMonth(at: Date(), latenessHours: PrivacySettings().latenessHours) }
    static func day(_ offset: Int) -> String { month.adding(days: offset).description }
    static var monthEnd: String { Statistics.Bucket.month.next(after: month).adding(days: -1).description }

    /// `count` women of the caller's band inserted at once, each with one reading of `value` of `type` on each
    /// of `days`: cheap accounts an attacker controls, or a crowd of ordinary peers.
    static func insertCrowd(_ harness: TestHarness, count: Int, days: [String], value: Double, type: SampleType = .heartRate) async throws {
        let tag = UUID().uuidString.prefix(8).lowercased()
        _ = try await harness.sql(
            """
            WITH a AS (
                INSERT INTO accounts (role, email, status, activated_at)
                SELECT 'user', 'crowd.\(tag).' || g || '@example.com', 'active', now() FROM generate_series(1, \(count)) AS g
                RETURNING id, email
            ), u AS (
                INSERT INTO users (account_id, fiscal_code, full_name, birth_date, sex)
                SELECT id, 'CROWD ' || email, 'Crowd', '\(peerBirthDate)', 'F' FROM a RETURNING account_id
            )
            INSERT INTO daily_rollups (user_id, type, day, count, sum, sum_squares, min, max)
            SELECT u.account_id, \(type.code), d, 1, \(value), \(value * value), \(value), \(value)
            FROM u CROSS JOIN unnest('{\(days.joined(separator: ","))}'::date[]) AS d
            """)
    }

    struct Bucket: Equatable, CustomStringConvertible {
        var start: String
        var month: String
        var people: Int
        var peopleMargin: Double
        var p50: Double?
        var p50Margin: Double?
        /// Everything but the start: the same for every bucket of one month's cell.
        var figures: String { "\(month) \(people) \(peopleMargin) \(p50.map { "\($0)" } ?? "nil") \(p50Margin.map { "\($0)" } ?? "nil")" }
        var description: String { "\(start) (\(month)) people=\(people)±\(peopleMargin) p50=\(p50.map { "\($0)" } ?? "nil")±\(p50Margin ?? .nan)" }
    }

    /// The peer buckets of a page, in the order given.
    static func peerBuckets(_ harness: TestHarness, _ token: String, from: String, to: String, bucket: String = "day", type: String = "heart_rate")
        async throws -> [Bucket]
    {
        let response = try await harness.request(.get, "/v1/me/statistics?type=\(type)&from=\(from)&to=\(to)&bucket=\(bucket)", token: token)
        try #require(response.status == .ok, "statistics answered \(response.status): \(harness.text(response))")
        let peers = try #require(try harness.object(response)["peers"] as? [String: Any])
        return (peers["buckets"] as? [[String: Any]] ?? []).map {
            Bucket(
                start: $0["start"] as? String ?? "?", month: $0["month"] as? String ?? "?", people: $0["people"] as? Int ?? -1,
                peopleMargin: ($0["peopleMargin95"] as? NSNumber)?.doubleValue ?? .nan, p50: ($0["p50"] as? NSNumber)?.doubleValue,
                p50Margin: ($0["p50Margin95"] as? NSNumber)?.doubleValue)
        }
    }

    /// Every stored peer cell, as text, to show that nothing was recomputed.
    static func storedCells(_ harness: TestHarness) async throws -> String {
        let row = try #require(
            try await harness.sql(
                "SELECT coalesce(string_agg(concat_ws(' ', sex, age_from, type, month, people, p10, p50, p90, loss_micro, computed_at), E'\\n' ORDER BY month, sex, age_from, type), '') FROM peer_month_cells"
            ).first)
        return try row.decode(String.self)
    }

    static let cellsPerMonth = Sex.allCases.count * PeerCellStore.bands.count * SampleType.allCases.count

    // MARK: Once, and never again

    @Test(
        "a month's cells are published once and never change: shifted windows read the same cells, and late uploads, new peers, an unshared type and an erasure revise nothing"
    )
    func publishedOnceNeverChanges() async throws {
        let noise = RecordingNoise(seed: 32_01)
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: noise) { harness in
            let attacker = try await harness.activeUser(Self.caller())
            let days = (0..<5).map { Self.day($0) }
            try await Self.insertCrowd(harness, count: 600, days: days, value: 70)
            // The target: one real person of the band.
            let target = Self.caller()
            let targetToken = try await harness.activeUser(target)
            try #require(try await harness.upload([("heart_rate", 100, "\(days[4])T09:00:00Z")], token: targetToken).status == .ok)

            // Two windows a day apart, inside the month: every bucket carries the same stored figures.
            let first = try await Self.peerBuckets(harness, attacker, from: days[0], to: days[3])
            try #require(first.count == 4, "the crowd passes k: \(first)")
            #expect(Set(first.map(\.month)) == [Self.month.description])
            #expect(noise.draws == Self.cellsPerMonth, "one count per cell of the month")
            #expect(noise.quantileDraws == 3 * Self.cellsPerMonth, "p10, p50 and p90 per cell")
            let second = try await Self.peerBuckets(harness, attacker, from: days[1], to: days[4])
            #expect(noise.draws == Self.cellsPerMonth, "the shifted window draws nothing")
            let figures = Set((first + second).map(\.figures))
            #expect(figures.count == 1, "\(figures)")
            let cells = try await Self.storedCells(harness)

            // Late uploads to the month, new peers, an unshared type and an erasure: the page and the cells stay.
            try #require(try await harness.upload([("heart_rate", 180, "\(days[2])T09:00:00Z")], token: targetToken).status == .ok)
            try await Self.insertCrowd(harness, count: 50, days: [days[2]], value: 160)
            _ = try await harness.request(.put, "/v1/me/sharing", json: #"{"types":[{"type":"heart_rate","shared":false}]}"#, token: targetToken)
            let erased = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(target.password)"}"#, token: targetToken)
            #expect(erased.status == .noContent || erased.status == .ok, "\(erased.status)")
            let again = try await Self.peerBuckets(harness, attacker, from: days[0], to: days[4])
            #expect(again.map(\.start) == days)
            #expect(Set(again.map(\.figures)) == figures)
            #expect(noise.draws == Self.cellsPerMonth)
            #expect(try await Self.storedCells(harness) == cells)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'") == 1)
        }
    }

    // MARK: Every cell, and the ledger

    @Test(
        "every cell of a month exists whoever is in it (442); one peer_statistics entry per published month with what one person can lose; months beyond the horizon are never published"
    )
    func everyCellAndTheLedger() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(Self.caller())
            try await Self.insertCrowd(harness, count: 3, days: [Self.day(3)], value: 70)
            #expect(Self.cellsPerMonth == 442)
            // A window of six months back to today: only the horizon's two closed months are published.
            let from = Statistics.Bucket.month.start(of: Self.month.adding(days: -150)).description
            _ = try await Self.peerBuckets(harness, token, from: from, to: CalendarDate.today.description, bucket: "month")
            let months = try await harness.sql("SELECT to_char(month, 'YYYY-MM-DD') FROM peer_months ORDER BY month").map {
                try $0.decode(String.self)
            }
            #expect(months == [PeerStatistics.month(before: Self.month).description, Self.month.description])
            #expect(try await harness.int("SELECT count(*) FROM peer_month_cells") == 2 * 442)
            let loss = PrivacySettings().peerCellLoss.micro * Int64(SampleType.allCases.count)
            #expect(
                try await harness.int(
                    """
                    SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics' AND company_id IS NULL AND request_id IS NULL
                      AND cells = 442 AND loss_micro = \(loss)
                    """) == 2)
            // Reading again, by any bucket, publishes nothing and debits nothing.
            for bucket in ["day", "week", "month"] {
                _ = try await Self.peerBuckets(harness, token, from: Self.day(0), to: Self.monthEnd, bucket: bucket)
            }
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'") == 2)
            #expect(try await harness.int("SELECT count(*) FROM peer_month_cells") == 2 * 442)
        }
    }

    @Test(
        "the arithmetic: any 366 days publish at most 15 months (a new server's catch-up included), and 15 months of cells cost a person at most the reserve"
    )
    func perPersonArithmetic() throws {
        let settings = PrivacySettings()
        #expect(PrivacySettings.peerMonthsPerYear == 15)
        #expect(
            settings.peerCellLoss.micro * Int64(SampleType.allCases.count * PrivacySettings.peerMonthsPerYear)
                <= PrivacyLoss(rho: settings.peerReserve).micro)
        #expect(abs(settings.peerCellLoss.rho - 0.5 / 255) < 1e-6)
        // Simulate servers started on many days: each publishes the horizon's months at its start, then every
        // month as it closes (a step a day is finer than any closing). Any 366 days hold at most 15 publications.
        let schedule = ReleaseSchedule(latenessHours: settings.latenessHours)
        let origin = CalendarDate(iso: "2025-01-01")!
        for startOffset in stride(from: 0, to: 400, by: 7) {
            var published: [CalendarDate: Date] = [:]
            for dayOffset in startOffset..<(startOffset + 800) {
                let now = Date(timeIntervalSince1970: Double(origin.adding(days: dayOffset).dayNumber) * 86_400 + 13 * 3600)
                var month = PeerStatistics.lastClosedMonth(at: now, latenessHours: settings.latenessHours)
                for _ in 0..<PeerStatistics.horizonMonths {
                    #expect(schedule.closes(.month, startingOn: month) <= now)
                    if published[month] == nil { published[month] = now }
                    month = PeerStatistics.month(before: month)
                }
            }
            let times = published.values.sorted()
            for (index, start) in times.enumerated() {
                let within = times[index...].prefix { $0.timeIntervalSince(start) < 366 * 86_400 }.count
                #expect(within <= PrivacySettings.peerMonthsPerYear, "server started on day \(startOffset): \(within) months in 366 days")
            }
        }
    }

    // MARK: Who is in a cell, and what is shown

    @Test("the k gate is on the noisy count: two real peers and noise of +1 pass k = 3; four real peers and noise of −2 do not")
    func kGateOnNoisyCount() async throws {
        for (peers, shift, shown) in [(2, Int64(1), true), (4, Int64(-2), false)] {
            try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: ShiftedNoise(shift: shift)) { harness in
                // The caller is one of the peers; the band holds only them.
                let woman = try await harness.activeUser(Self.caller())
                try await Self.insertCrowd(harness, count: peers - 1, days: [Self.day(1)], value: 70)
                try #require(try await harness.upload([("heart_rate", 71, "\(Self.day(1))T09:00:00Z")], token: woman).status == .ok)
                let buckets = try await Self.peerBuckets(harness, woman, from: Self.day(0), to: Self.day(2), bucket: "month")
                #expect(buckets.map(\.people) == (shown ? [peers + Int(shift)] : []), "\(peers) peers, noise \(shift)")
            }
        }
    }

    @Test("a percentile whose 95 % margin exceeds its type's target is null and not drawn; a crowd's is shown with its margin")
    func marginBeyondTargetIsNull() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(Self.caller())
            // Heart rate: 300 peers at 69 and 300 at 71 (a margin of tenths). Steps: five peers (a margin of thousands).
            try await Self.insertCrowd(harness, count: 300, days: [Self.day(1)], value: 69)
            try await Self.insertCrowd(harness, count: 300, days: [Self.day(1)], value: 71)
            try await Self.insertCrowd(harness, count: 5, days: [Self.day(1)], value: 8000, type: .stepCount)
            let heart = try await Self.peerBuckets(harness, token, from: Self.day(0), to: Self.day(0), bucket: "month")
            #expect(heart.count == 1)
            #expect((69...71).contains(heart.first?.p50 ?? 0), "\(heart)")
            #expect((heart.first?.p50Margin ?? .nan) <= PeerAccuracyTarget.of(.heartRate))
            let response = try await harness.request(
                .get, "/v1/me/statistics?type=step_count&from=\(Self.day(0))&to=\(Self.day(0))&bucket=month", token: token)
            let bucket = try #require(((try harness.object(response)["peers"] as? [String: Any])?["buckets"] as? [[String: Any]])?.first)
            #expect(bucket["people"] as? Int == 5)
            #expect(bucket["p50"] == nil || bucket["p50"] is NSNull, "\(bucket)")
            #expect(bucket["p50Margin95"] == nil || bucket["p50Margin95"] is NSNull)
            #expect(bucket["mean"] == nil && bucket["days"] == nil)
            // Directly: the same cell at 1,000 people whose percentiles sit far apart has a margin beyond the target.
            let mechanism = CellMechanism(noise: NoNoise(), minimumPeople: 3)
            let loss = PrivacySettings().peerCellLoss
            let spread = PeerFigures(people: 1000, p10: 2000, p50: 9000, p90: 20000, loss: loss)
            let shown = try #require(mechanism.shown(spread, type: .stepCount))
            let margins = CellMechanism.margins95(spread, type: .stepCount)
            #expect(margins.p50 > PeerAccuracyTarget.of(.stepCount) ? shown.p50 == nil : shown.p50?.value == 9000)
            #expect(mechanism.shown(PeerFigures(people: 2, p10: 60, p50: 70, p90: 80, loss: loss), type: .heartRate) == nil)
        }
    }

    @Test("a person who does not share a type is in none of its cells")
    func unsharedTypeLeftOut() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 1 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(Self.caller())
            try #require(try await harness.upload([("heart_rate", 70, "\(Self.day(1))T09:00:00Z")], token: token).status == .ok)
            let other = try await harness.activeUser(Self.caller())
            try #require(try await harness.upload([("heart_rate", 80, "\(Self.day(1))T09:00:00Z")], token: other).status == .ok)
            let saved = try await harness.request(.put, "/v1/me/sharing", json: #"{"types":[{"type":"heart_rate","shared":false}]}"#, token: other)
            try #require(saved.status == .ok, "\(harness.text(saved))")
            let buckets = try await Self.peerBuckets(harness, token, from: Self.day(0), to: Self.day(0), bucket: "month")
            #expect(buckets.map(\.people) == [1])
        }
    }

    // MARK: Publishing

    @Test("the same month published at once by two instances and two requests is stored once, with one ledger entry")
    func concurrentPublicationStoresOnce() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(Self.caller())
            try await Self.insertCrowd(harness, count: 4, days: [Self.day(2), Self.day(3)], value: 70)
            let url = harness.databaseURL
            let month = Self.month
            let won = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await TestDatabase.withClient(url) { client in
                            let peers = PeerStatistics(
                                client: client, mechanism: CellMechanism(noise: NoNoise(), minimumPeople: 3), settings: PrivacySettings())
                            return try await peers.publish(month, logger: TestDatabase.logger) == .published ? 1 : 0
                        }
                    }
                }
                for _ in 0..<2 {
                    group.addTask {
                        let response = try await harness.requestOnNewConnection(
                            .get, "/v1/me/statistics?type=heart_rate&from=\(Self.day(0))&to=\(Self.day(3))", token: token)
                        #expect(response.status == .ok, "\(response.body)")
                        return 0
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(won <= 1)
            #expect(try await harness.int("SELECT count(*) FROM peer_months WHERE month = '\(month)'") == 1)
            #expect(try await harness.int("SELECT count(*) FROM peer_month_cells WHERE month = '\(month)'") == 442)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'") == 1)
            let buckets = try await Self.peerBuckets(harness, token, from: Self.day(0), to: Self.day(3))
            #expect(buckets.map(\.start) == (0...3).map { Self.day($0) })
            #expect(buckets.allSatisfy { $0.people == 4 })
        }
    }

    @Test("a new server publishes the newest missing closed month each step, at most the horizon's two, then nothing")
    func newServerPublishesAtMostTheHorizon() async throws {
        try await TestHarness.run(noise: NoNoise()) { harness in
            let now = Date()
            try await TestDatabase.withClient(harness.databaseURL) { client in
                let peers = PeerStatistics(client: client, mechanism: CellMechanism(noise: NoNoise(), minimumPeople: 3), settings: PrivacySettings())
                let newest = peers.lastClosedMonth(at: now)
                // The newest closed month: the previous one, or the one before in the first 36 hours of a month.
                let thisMonth = Statistics.Bucket.month.start(of: CalendarDate(now, in: TimeZone(identifier: "UTC")!))
                #expect(
                    [PeerStatistics.month(before: thisMonth), PeerStatistics.month(before: PeerStatistics.month(before: thisMonth))].contains(newest))
                for _ in 0..<2 { #expect(try await peers.publishNewestMissingMonth(at: now, logger: TestDatabase.logger)) }
                #expect(try await peers.publishNewestMissingMonth(at: now, logger: TestDatabase.logger) == false)
                let months = try await harness.sql("SELECT to_char(month, 'YYYY-MM-DD') FROM peer_months ORDER BY computed_at, month").map {
                    try $0.decode(String.self)
                }
                #expect(months == [newest, PeerStatistics.month(before: newest)].map(\.description))
            }
        }
    }

    @Test("the reserve is enforced: with a year of daily peer entries (an upgraded server) a month waits, and publishes once they age out")
    func reserveIsEnforced() async throws {
        try await TestHarness.run(noise: NoNoise()) { harness in
            // Daily peer cells before issue 32 cost 0.5 / 402 a day, and a server upgraded in December has about
            // 365 of them in its twelve calendar months; here 300 entries of ρ 0.0016 (0.48 in all) leave less of the
            // reserve than a month costs (0.0333). Without the check the month is published: 0.513 of a 0.5 reserve.
            _ = try await harness.sql(
                """
                INSERT INTO privacy_ledger (at, company_id, request_id, kind, cells, loss_micro)
                SELECT now() - make_interval(hours => d), NULL, NULL, 'peer_statistics', 442, 1600
                FROM generate_series(0, 299) d
                """)
            let now = Date()
            try await TestDatabase.withClient(harness.databaseURL) { client in
                let peers = PeerStatistics(client: client, mechanism: CellMechanism(noise: NoNoise(), minimumPeople: 3), settings: PrivacySettings())
                let month = peers.lastClosedMonth(at: now)
                #expect(try await peers.publish(month, logger: TestDatabase.logger) == .reserveSpent)
                // The background step stops rather than spinning, and nothing is stored or debited.
                #expect(try await peers.publishNewestMissingMonth(at: now, logger: TestDatabase.logger) == false)
                #expect(try await harness.sql("SELECT count(*)::int8 FROM peer_month_cells").first?.decode(Int64.self) == 0)
                #expect(try await harness.sql("SELECT count(*)::int8 FROM privacy_ledger").first?.decode(Int64.self) == 300)
                // Entries older than the twelve calendar months no longer count: the month is published.
                _ = try await harness.sql("UPDATE privacy_ledger SET at = at - interval '13 months'")
                #expect(try await peers.publish(month, logger: TestDatabase.logger) == .published)
                #expect(try await peers.publish(month, logger: TestDatabase.logger) == .alreadyPublished)
            }
        }
    }

    @Test("the server's background loop publishes the newest closed month without any request")
    func backgroundLoopRuns() async throws {
        try await TestHarness.run(configure: { $0.peerStatisticsInterval = .seconds(1) }, noise: NoNoise()) { harness in
            var published = 0
            for _ in 0..<600 where published < 2 {
                published = try await harness.int("SELECT count(*) FROM peer_months")
                if published < 2 { try await Task.sleep(for: .milliseconds(100)) }
            }
            try #require(published == 2)
            let first = try await harness.sql("SELECT to_char(month, 'YYYY-MM-DD') FROM peer_months ORDER BY computed_at, month LIMIT 1")
                .map { try $0.decode(String.self) }
            #expect(first == [Self.month.description])
        }
    }

    @Test("PEER_STATISTICS_INTERVAL: ten minutes by default, 0 turns the loop off, anything else but seconds up to a day stops the start")
    func intervalSetting() throws {
        func interval(_ environment: [String: String]) throws -> Duration? {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)).peerStatisticsInterval
        }
        #expect(try interval([:]) == .seconds(600))
        #expect(try interval(["PEER_STATISTICS_INTERVAL": "0"]) == nil)
        #expect(try interval(["PEER_STATISTICS_INTERVAL": "60"]) == .seconds(60))
        for wrong in ["-1", "ten", "1.5", "86401"] {
            #expect(throws: ConfigurationError.self) { try interval(["PEER_STATISTICS_INTERVAL": wrong]) }
        }
    }
}

/// Noise of exactly `shift` on every count (and the best candidate of every exponential mechanism): to show
/// that a gate reads the noisy figure, not the exact one.
struct ShiftedNoise: NoiseSource {
    var shift: Int64
    func discreteGaussian(variance: UInt64) -> Int64 { shift }
    func exponentialMechanism(scores: [UInt64], numerator: UInt64, denominator: UInt64) -> Int {
        NoNoise().exponentialMechanism(scores: scores, numerator: numerator, denominator: denominator)
    }
}

/// The server's seeded exact samplers (`SeededNoise`: calibrated as the secure source is, but the same on every
/// run, so the attack tests are deterministic), counting their draws and keeping the variances asked.
final class RecordingNoise: NoiseSource, @unchecked Sendable {
    private let lock = NSLock()
    private let noise: SeededNoise
    private var asked: [UInt64: Int] = [:]

    init(seed: UInt64) { noise = SeededNoise(seed: seed) }

    func discreteGaussian(variance: UInt64) -> Int64 {
        lock.withLock {
            asked[variance, default: 0] += 1
            return noise.discreteGaussian(variance: variance)
        }
    }

    func exponentialMechanism(scores: [UInt64], numerator: UInt64, denominator: UInt64) -> Int {
        lock.withLock {
            selections += 1
            return noise.exponentialMechanism(scores: scores, numerator: numerator, denominator: denominator)
        }
    }

    /// How many quantiles were drawn.
    var quantileDraws: Int { lock.withLock { selections } }
    private var selections = 0

    var draws: Int { lock.withLock { asked.values.reduce(0, +) } }
    var variances: Set<UInt64> { lock.withLock { Set(asked.keys) } }
}
