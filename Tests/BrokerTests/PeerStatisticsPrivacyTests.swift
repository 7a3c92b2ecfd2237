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

/// Issue 16, attack family 7: peer statistics on `GET /v1/me/statistics` must not reveal a person, neither
/// by differencing windows a day apart nor with k − 1 cheap accounts in one's own band. Against the former
/// per-request exact figures each of these tests fails: the differences were exact, a late upload changed a
/// day's figures, and nothing was stored or debited. Noise comes from the seeded exact sampler (calibrated as
/// the secure source is, but the same on every run) or `NoNoise` where figures must be exact.
@Suite("Peer statistics privacy", .serialized)
struct PeerStatisticsPrivacyTests {
    /// A woman aged 35 this whole year: her band is "women aged 30–39".
    static func caller() -> TestHarness.Person { StatisticsFixtures.caller() }
    /// A birth date in the caller's band on every day of the last few weeks.
    static var peerBirthDate: String { StatisticsFixtures.peerBirthDates[0] }

    static func day(_ offset: Int) -> String { StatisticsFixtures.day(offset) }

    /// `count` women of the caller's band inserted at once, each with one heart-rate reading of `value` on
    /// each of `days`: cheap accounts an attacker controls, or a crowd of ordinary peers.
    static func insertCrowd(_ harness: TestHarness, count: Int, days: [String], value: Double) async throws {
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
            SELECT u.account_id, \(SampleType.heartRate.code), d, 1, \(value), \(value * value), \(value), \(value)
            FROM u CROSS JOIN unnest('{\(days.joined(separator: ","))}'::date[]) AS d
            """)
    }

    /// One registered person of the caller's band, logged in.
    static func person(_ harness: TestHarness) async throws -> String {
        try await harness.activeUser(
            TestHarness.Person(
                fiscalCode: TestHarness.uniqueFiscalCode(birthDate: peerBirthDate, sex: "F"), birthDate: peerBirthDate, sex: "F"))
    }

    /// The peer buckets of a heart-rate page, as (start → (people, mean)), in the order given.
    static func peerBuckets(_ harness: TestHarness, _ token: String, from: String, to: String, bucket: String = "day") async throws
        -> [(start: String, people: Int, mean: Double, meanMargin: Double)]
    {
        let response = try await harness.request(.get, "/v1/me/statistics?type=heart_rate&from=\(from)&to=\(to)&bucket=\(bucket)", token: token)
        try #require(response.status == .ok, "statistics answered \(response.status): \(harness.text(response))")
        let peers = try #require(try harness.object(response)["peers"] as? [String: Any])
        return (peers["buckets"] as? [[String: Any]] ?? []).map {
            (
                $0["start"] as? String ?? "?", $0["people"] as? Int ?? -1, ($0["mean"] as? NSNumber)?.doubleValue ?? .nan,
                ($0["meanMargin95"] as? NSNumber)?.doubleValue ?? .nan
            )
        }
    }

    /// Every stored peer cell, as text, to show that nothing was recomputed.
    static func storedCells(_ harness: TestHarness) async throws -> String {
        let row = try #require(
            try await harness.sql(
                "SELECT coalesce(string_agg(concat_ws(' ', sex, age_from, type, day, people, centred_sum, bins, computed_at), E'\\n' ORDER BY day, sex, age_from, type), '') FROM peer_cells"
            ).first)
        return try row.decode(String.self)
    }

    /// Noise draws for one published day: every sex × band × type cell draws its count, its sum and each bin.
    static let drawsPerDay =
        Sex.allCases.count * PeerCellStore.bands.count
        * SampleType.allCases.map { 2 + ContributionBounds.of($0).bins }.reduce(0, +)

    // MARK: (a) Windows a day apart

    @Test(
        "windows a day apart compose the same stored day cells: the later window adds one noisy day, its difference is not the person's value, and a late upload changes nothing"
    )
    func windowsADayApart() async throws {
        let noise = RecordingNoise(seed: 16_07)
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: noise) { harness in
            let attacker = try await harness.activeUser(Self.caller())
            let days = (4...8).reversed().map { Self.day(-$0) }  // oldest first; the last is the target's
            // A crowd the attacker knows (600 at 70 beats/min every day), so every day passes k whatever the noise.
            try await Self.insertCrowd(harness, count: 600, days: days, value: 70)
            // The target: one real person, on the last day only, at 100.
            let target = try await Self.person(harness)
            let upload = try await harness.upload([("heart_rate", 100, "\(days[4])T09:00:00Z")], token: target)
            try #require(upload.status == .ok)

            let first = try await Self.peerBuckets(harness, attacker, from: days[0], to: days[3])
            #expect(noise.draws == 4 * Self.drawsPerDay, "the first window publishes its four closed days")
            let second = try await Self.peerBuckets(harness, attacker, from: days[0], to: days[4])
            #expect(noise.draws == 5 * Self.drawsPerDay, "the second window draws only for its one new day")
            // The common days are the same stored cells (fresh noise would have moved every one of them).
            #expect(second.prefix(first.count).map(\.start) == first.map(\.start))
            #expect(zip(first, second).allSatisfy { $0.people == $1.people && $0.mean == $1.mean })
            #expect(first.count >= 3, "the crowd passes k on (nearly) every day: \(first)")

            // The difference of the two windows is the new day's noisy cell. Knowing the crowd exactly, the
            // attacker's best reading of the target is people × mean − 600 × 70: exact before (100), now off by
            // the noise on the day's sum and count.
            let added = try #require(second.first { $0.start == days[4] }, "the target's day is shown: \(second)")
            let recovered = Double(added.people) * added.mean - 600 * 70
            #expect(abs(recovered - 100) > 1, "recovered \(recovered)")

            // A late upload to a published day (and a new peer on it) changes neither the page nor the cells.
            let cells = try await Self.storedCells(harness)
            let late = try await harness.upload([("heart_rate", 180, "\(days[2])T09:00:00Z")], token: target)
            try #require(late.status == .ok)
            try await Self.insertCrowd(harness, count: 5, days: [days[2]], value: 160)
            let again = try await Self.peerBuckets(harness, attacker, from: days[0], to: days[4])
            #expect(again.map(\.start) == second.map(\.start))
            #expect(zip(again, second).allSatisfy { $0.people == $1.people && $0.mean == $1.mean })
            #expect(noise.draws == 5 * Self.drawsPerDay)
            #expect(try await Self.storedCells(harness) == cells)
        }
    }

    // MARK: (b) k − 1 cheap accounts

    @Test(
        "k − 1 cheap accounts (or many more) in one's own band beside one real peer: her value is not read, the sum carries noise of at least its sensitivity's scale",
        arguments: [2, 600])
    func cheapAccounts(sybils: Int) async throws {
        let noise = RecordingNoise(seed: 16_007 + UInt64(sybils))
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: noise) { harness in
            let attacker = try await harness.activeUser(Self.caller())
            let days = (3...10).reversed().map { Self.day(-$0) }
            try await Self.insertCrowd(harness, count: sybils, days: days, value: 70)
            // The one real peer: 100 every day. Before, people × mean − the sybils' known sum gave exactly 100.
            let target = try await Self.person(harness)
            let upload = try await harness.upload(days.map { ("heart_rate", 100, "\($0)T09:00:00Z") }, token: target)
            try #require(upload.status == .ok)

            let shown = try await Self.peerBuckets(harness, attacker, from: days.first!, to: days.last!)
            // Each day is an independent publication; a day whose noisy count is below k is not shown at all.
            #expect(!shown.isEmpty, "with this seed some day passes k")
            let recovered = shown.map { Double($0.people) * $0.mean - Double(sybils) * 70 }
            #expect(recovered.allSatisfy { abs($0 - 100) > 1 }, "recovered \(recovered)")
            let average = recovered.reduce(0, +) / Double(recovered.count)
            #expect(abs(average - 100) > 1, "averaged over \(recovered.count) publications: \(average)")

            // The sum's noise: one person moves the centred sum by at most (160 − 40) / 2 / 0.01 = 6000 units;
            // the discrete Gaussian on it costs Δ²/(2σ²) of the sum's share of the cell's loss, so σ² is at least
            // 6000² / (2 · 0.6 · ρ) — about 6,100 beats/min of noise on a day's sum at the default reserve.
            let rho = PrivacySettings().peerCellLoss.rho
            let required = 6000.0 * 6000 / (2 * CellCalibration.Split.groupCell.sum * rho)
            let heartRate = CellCalibration(type: .heartRate, loss: PrivacySettings().peerCellLoss)
            #expect(Double(heartRate.sumVariance) >= required)
            #expect(noise.variances.contains(heartRate.sumVariance))
            #expect(heartRate.sumStandardDeviation >= 6000)
            // And every shown day says so: its margin is wider than the whole clamp range.
            #expect(shown.allSatisfy { $0.meanMargin > 1 }, "\(shown)")
        }
    }

    // MARK: (c) The ledger

    @Test("the ledger has one peer_statistics entry per published day: no company, every cell of the day, and what one person can lose that day")
    func ledgerEntryPerDay() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(Self.caller())
            try await Self.insertCrowd(harness, count: 3, days: [Self.day(-5)], value: 70)
            _ = try await Self.peerBuckets(harness, token, from: Self.day(-12), to: Self.day(0))
            // Days −12 … −3 have closed (−2 only after noon UTC, and it is not in the window's closed part before).
            let published = try await harness.int("SELECT count(*) FROM peer_days")
            #expect(published >= 10 && published <= 11)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'") == published)
            let cellsPerDay = Sex.allCases.count * PeerCellStore.bands.count * SampleType.allCases.count
            #expect(cellsPerDay == 442)
            #expect(try await harness.int("SELECT count(*) FROM peer_cells") == published * cellsPerDay)
            let loss = PrivacySettings().peerCellLoss.micro * Int64(SampleType.allCases.count)
            #expect(
                try await harness.int(
                    """
                    SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics' AND company_id IS NULL AND request_id IS NULL
                      AND cells = \(cellsPerDay) AND loss_micro = \(loss)
                    """) == published)
            // Reading again publishes nothing and debits nothing.
            _ = try await Self.peerBuckets(harness, token, from: Self.day(-12), to: Self.day(0), bucket: "week")
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'") == published)
            // An older window adds its own days, one entry each.
            _ = try await Self.peerBuckets(harness, token, from: Self.day(-15), to: Self.day(-10))
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'") == published + 3)
        }
    }

    // MARK: (d) Once, whoever asks

    @Test("the same days published at once by two instances and two requests are stored once, with one ledger entry each")
    func concurrentPublicationStoresOnce() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(Self.caller())
            let days = (3...6).map { Self.day(-$0) }
            try await Self.insertCrowd(harness, count: 4, days: days, value: 70)
            let url = harness.databaseURL
            let won = try await withThrowingTaskGroup(of: Int.self) { group in
                // Two other "instances": publishers on pools of their own.
                for _ in 0..<2 {
                    group.addTask {
                        try await TestDatabase.withClient(url) { client in
                            let peers = PeerStatistics(
                                client: client, mechanism: CellMechanism(noise: NoNoise(), minimumPeople: 3), settings: PrivacySettings())
                            var won = 0
                            for day in days { if try await peers.publish(CalendarDate(iso: day)!, logger: TestDatabase.logger) { won += 1 } }
                            return won
                        }
                    }
                }
                // And two requests to the server, each on a connection of its own.
                for _ in 0..<2 {
                    group.addTask {
                        let response = try await harness.requestOnNewConnection(
                            .get, "/v1/me/statistics?type=heart_rate&from=\(days.last!)&to=\(days.first!)", token: token)
                        #expect(response.status == .ok, "\(response.body)")
                        return 0
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(won <= days.count)
            #expect(try await harness.int("SELECT count(*) FROM peer_days") == days.count)
            #expect(try await harness.int("SELECT count(*) FROM peer_cells") == days.count * 442)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'") == days.count)
            // Everyone reads the same four days, each counting the crowd of four.
            let buckets = try await Self.peerBuckets(harness, token, from: days.last!, to: days.first!)
            #expect(buckets.map(\.start) == days.reversed())
            #expect(buckets.allSatisfy { $0.people == 4 && $0.mean == 70 })
        }
    }

    // MARK: Which days, and when

    @Test("a request publishes at most 31 missing days, the newest first; the next one the rest")
    func onDemandIsBounded() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            let token = try await harness.activeUser(Self.caller())
            let days = (3...34).map { Self.day(-$0) }  // thirty-two closed days within the horizon, newest first
            try await Self.insertCrowd(harness, count: 3, days: days, value: 70)
            let first = try await Self.peerBuckets(harness, token, from: days.last!, to: days.first!)
            #expect(first.map(\.start) == Array(days.prefix(31).reversed()))
            #expect(try await harness.int("SELECT count(*) FROM peer_days") == 31)
            let second = try await Self.peerBuckets(harness, token, from: days.last!, to: days.first!)
            #expect(second.map(\.start) == days.reversed())
        }
    }

    @Test("the server's background loop publishes closed days, newest first, without any request")
    func backgroundLoopRuns() async throws {
        try await TestHarness.run(configure: { $0.peerStatisticsInterval = .seconds(1) }, noise: NoNoise()) { harness in
            // It catches up on the horizon's days one by one; the newest are there within moments (a minute at most here).
            var published = 0
            for _ in 0..<600 where published < 3 {
                published = try await harness.int("SELECT count(*) FROM peer_days")
                if published < 3 { try await Task.sleep(for: .milliseconds(100)) }
            }
            try #require(published >= 3)
            let newest = try await harness.sql("SELECT to_char(day, 'YYYY-MM-DD') FROM peer_days ORDER BY computed_at, day LIMIT 3")
                .map { try $0.decode(String.self) }
            let today = CalendarDate(Date(), in: TimeZone(identifier: "UTC")!)
            #expect([today.adding(days: -2).description, today.adding(days: -3).description].contains(newest[0]))
            #expect(newest == (0..<3).map { CalendarDate(iso: newest[0])!.adding(days: -$0).description })
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

    @Test("the background publishes the newest missing closed day each step, and stops when the horizon's days are done")
    func backgroundNewestFirst() async throws {
        try await TestHarness.run(noise: NoNoise()) { harness in
            let now = Date()
            try await TestDatabase.withClient(harness.databaseURL) { client in
                let peers = PeerStatistics(client: client, mechanism: CellMechanism(noise: NoNoise(), minimumPeople: 3), settings: PrivacySettings())
                let newest = peers.lastClosedDay(at: now)
                // The newest closed day: two or three days back (its last time zone's day ended, then 24 hours).
                let today = CalendarDate(now, in: TimeZone(identifier: "UTC")!)
                #expect([2, 3].contains(today.dayNumber - newest.dayNumber))
                // A day a request already published is skipped.
                try await peers.publish(newest.adding(days: -1), logger: TestDatabase.logger)
                for _ in 0..<2 { #expect(try await peers.publishNewestMissingDay(at: now, logger: TestDatabase.logger)) }
                let days = try await harness.sql("SELECT to_char(day, 'YYYY-MM-DD') FROM peer_days ORDER BY computed_at, day").map {
                    try $0.decode(String.self)
                }
                #expect(days == [newest.adding(days: -1), newest, newest.adding(days: -2)].map(\.description))
                // Everything from the horizon on already published: nothing to do.
                _ = try await harness.sql(
                    "INSERT INTO peer_days (day) SELECT d::date FROM generate_series('\(today.adding(days: -PeerStatistics.horizonDays))'::date, '\(newest)'::date, interval '1 day') AS d ON CONFLICT DO NOTHING"
                )
                #expect(try await peers.publishNewestMissingDay(at: now, logger: TestDatabase.logger) == false)
            }
        }
    }
}

/// The server's seeded exact discrete Gaussian (`SeededNoise`: calibrated as the secure source is, but the same
/// on every run, so the attack tests are deterministic), counting its draws and keeping the variances asked.
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
