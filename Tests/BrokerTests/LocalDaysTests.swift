import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Real phones' data: many records a day of cumulative types, summed per person and *local* day; sleep
/// on the day it ends; time zones from the phone and the profile. Every expected figure is computed here,
/// with Foundation's calendar, independently of the server's SQL.
@Suite("Local days and daily totals")
struct LocalDaysTests {
    typealias Triple = (type: String, value: Double, at: String)

    static let rome = TimeZone(identifier: "Europe/Rome")!
    static let newYork = TimeZone(identifier: "America/New_York")!

    /// RFC 3339 text of `date` with the UTC offset `zone` has at that moment (as a phone writes it).
    static func text(_ date: Date, offsetOf zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static func localDay(_ date: Date, in zone: TimeZone) -> String { CalendarDate(date, in: zone).description }

    /// A local wall-clock time in Rome.
    static func romeTime(_ day: String, _ hour: Int, _ minute: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = rome
        let date = CalendarDate(iso: day)!
        return calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day, hour: hour, minute: minute))!
    }

    /// Step records as an iPhone writes them: tens a day, a few minutes each, at uneven times including
    /// minutes after local midnight and before the next (which UTC days would put on the wrong day),
    /// across the end of daylight saving time (25 October 2026 in Rome). Offsets vary: most are Rome's
    /// offset of the moment, some UTC (`Z`), some a traveller's New York offset — the same instants.
    static func stepRecords(days: [String], seed: UInt64) -> [(value: Double, at: Date, text: String)] {
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var records: [(Double, Date, String)] = []
        for (index, day) in days.enumerated() {
            var minutes = Set([5, 23 * 60 + 55])  // 00:05 and 23:55 local
            while minutes.count < 30 + index { minutes.insert(6 * 60 + next(17 * 60)) }
            for minute in minutes.sorted() {
                let at = romeTime(day, minute / 60, minute % 60)
                let value = Double(20 + next(400))
                let text =
                    switch next(5) {
                    case 0: Self.text(at, offsetOf: TimeZone(identifier: "UTC")!)
                    case 1: Self.text(at, offsetOf: newYork)
                    default: Self.text(at, offsetOf: rome)
                    }
                records.append((value, at, text))
            }
        }
        return records
    }

    static let dstDays = ["2026-10-22", "2026-10-23", "2026-10-24", "2026-10-25", "2026-10-26", "2026-10-27", "2026-10-28"]

    static func totals(_ records: [(value: Double, at: Date, text: String)], in zone: TimeZone) -> [String: Double] {
        records.reduce(into: [:]) { $0[localDay($1.at, in: zone), default: 0] += $1.value }
    }

    static func uploadJSON(_ samples: [Triple], timeZone: String?) -> String {
        let items = samples.map { #"{"type":"\#($0.type)","value":\#($0.value),"at":"\#($0.at)"}"# }
        return "{" + (timeZone.map { #""timeZone":"\#($0)","# } ?? "") + #""samples":["# + items.joined(separator: ",") + "]}"
    }

    static func upload(_ harness: TestHarness, _ token: String, _ samples: [Triple], timeZone: String? = nil) async throws {
        let response = try await harness.request(.post, "/v1/me/samples", json: uploadJSON(samples, timeZone: timeZone), token: token)
        try #require(response.status == .ok, "upload answered \(response.status): \(harness.text(response))")
    }

    static func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-6 * max(1, abs(b)) }

    @Test("steps are summed per local day across offsets and a DST change; the phone's zone is adopted")
    func dailyTotalsOnLocalDays() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let records = Self.stepRecords(days: Self.dstDays, seed: 7)
            try await Self.upload(harness, token, records.map { ("step_count", $0.value, $0.text) }, timeZone: "Europe/Rome")
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: token))
            #expect(me["timeZone"] as? String == "Europe/Rome")

            let expected = Self.totals(records, in: Self.rome)
            let (body, own) = try await StatisticsFixtures.statistics(harness, token, "type=step_count&from=2026-10-22&to=2026-10-28&bucket=day")
            #expect(body["aggregation"] as? String == "daily_total")
            #expect(body["timeZone"] as? String == "Europe/Rome")
            #expect(own.map(\.start) == Self.dstDays)
            for bucket in own {
                let total = try #require(expected[bucket.start])
                #expect(Self.close(bucket.mean, total), "\(bucket.start): mean \(bucket.mean), expected the day's total \(total)")
                #expect(bucket.total.map { Self.close($0, total) } == true)
                #expect(bucket.min == bucket.mean && bucket.max == bucket.mean && bucket.days == 1)
            }
            // The same records on UTC days would differ: the test data really straddles local midnights.
            #expect(Self.totals(records, in: TimeZone(identifier: "UTC")!) != expected)

            // Weeks start on Monday: 19–25 and 26 October hold four and three of the days.
            let (_, weeks) = try await StatisticsFixtures.statistics(harness, token, "type=step_count&from=2026-10-22&to=2026-10-28&bucket=week")
            #expect(weeks.map(\.start) == ["2026-10-19", "2026-10-26"])
            for (week, days) in zip(weeks, [Array(Self.dstDays[0..<4]), Array(Self.dstDays[4...])]) {
                let dailyTotals = days.map { expected[$0]! }
                #expect(Self.close(week.mean, dailyTotals.reduce(0, +) / Double(dailyTotals.count)), "\(week.start)")
                #expect(week.min == dailyTotals.min() && week.max == dailyTotals.max() && week.days == days.count)
                #expect(week.total.map { Self.close($0, dailyTotals.reduce(0, +)) } == true)
            }
        }
    }

    @Test("a night's sleep counts for the day it ends; readings are still averaged")
    func sleepCountsForTheWakeUpDay() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let bedtime = Self.romeTime("2026-10-24", 23, 30)  // the night the clocks go back: 8.5 h until 07:00
            let nap = Self.romeTime("2026-10-25", 14, 0)
            let samples: [Triple] = [
                ("sleeping_hours", 8.5, Self.text(bedtime, offsetOf: Self.rome)),
                ("sleeping_hours", 0.75, Self.text(nap, offsetOf: Self.rome)),
                ("heart_rate", 50, Self.text(Self.romeTime("2026-10-25", 0, 30), offsetOf: Self.rome)),
                ("heart_rate", 70, Self.text(Self.romeTime("2026-10-25", 23, 30), offsetOf: Self.rome)),
            ]
            try await Self.upload(harness, token, samples, timeZone: "Europe/Rome")
            let (sleepBody, sleep) = try await StatisticsFixtures.statistics(harness, token, "type=sleeping_hours&from=2026-10-23&to=2026-10-27")
            #expect(sleepBody["aggregation"] as? String == "daily_total")
            #expect(sleep.map(\.start) == ["2026-10-25"])
            #expect(sleep.first.map { Self.close($0.mean, 9.25) } == true)
            let (heartBody, heart) = try await StatisticsFixtures.statistics(harness, token, "type=heart_rate&from=2026-10-23&to=2026-10-27")
            #expect(heartBody["aggregation"] as? String == "mean")
            #expect(heart.count == 1 && heart.first?.start == "2026-10-25")
            #expect(heart.first.map { $0.mean == 60 && $0.min == 50 && $0.max == 70 && $0.count == 2 && $0.total == nil } == true)
        }
    }

    @Test("changing the profile's time zone moves every day; a bad zone changes nothing")
    func changingTheTimeZoneMovesTheDays() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let records = Self.stepRecords(days: Self.dstDays, seed: 11)
            // No zone known yet: UTC days.
            try await Self.upload(harness, token, records.map { ("step_count", $0.value, $0.text) })
            let (utcBody, utc) = try await StatisticsFixtures.statistics(harness, token, "type=step_count&from=2026-10-20&to=2026-10-30")
            #expect(utcBody["timeZone"] as? String == "UTC")
            let utcTotals = Self.totals(records, in: TimeZone(identifier: "UTC")!)
            #expect(utc.allSatisfy { Self.close($0.mean, utcTotals[$0.start] ?? -1) })

            for bad in ["Mars/Olympus_Mons", "+01:00", "CET", "EST5EDT", "Etc/GMT-1", "US/Eastern", "europe/rome", ""] {
                let response = try await harness.request(.patch, "/v1/me", json: #"{"timeZone":"\#(bad)"}"#, token: token)
                #expect(response.status == .unprocessableContent, "\(bad)")
                #expect(try harness.errorFields(response) == ["timeZone"])
            }
            let company = try await harness.activeCompany()
            let notForCompany = try await harness.request(.patch, "/v1/me", json: #"{"timeZone":"Europe/Rome"}"#, token: company)
            #expect(notForCompany.status == .unprocessableContent)

            // A phone's zone does not override one already chosen… (none yet here, so the upload sets it)
            let changed = try await harness.request(.patch, "/v1/me", json: #"{"timeZone":"America/New_York"}"#, token: token)
            #expect(changed.status == .ok)
            #expect(try harness.object(changed)["timeZone"] as? String == "America/New_York")
            let newYorkTotals = Self.totals(records, in: Self.newYork)
            let (_, moved) = try await StatisticsFixtures.statistics(harness, token, "type=step_count&from=2026-10-20&to=2026-10-30")
            #expect(
                Dictionary(uniqueKeysWithValues: moved.map { ($0.start, $0.mean) }).mapValues { ($0 * 1000).rounded() }
                    == newYorkTotals.mapValues { ($0 * 1000).rounded() })

            // …and an upload naming another zone leaves the chosen one alone.
            try await Self.upload(harness, token, [("step_count", 10, "2026-10-29T12:00:00Z")], timeZone: "Europe/Rome")
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: token))
            #expect(me["timeZone"] as? String == "America/New_York")
        }
    }

    @Test("every zone name the server accepts is one PostgreSQL knows, so no accepted name can fail a rollup")
    func acceptedZonesAreKnownToPostgreSQL() async throws {
        try await TestHarness.run { harness in
            let known = Set(try await harness.sql("SELECT name FROM pg_timezone_names").map { try $0.decode(String.self) })
            let abbreviations = Set(try await harness.sql("SELECT abbrev FROM pg_timezone_abbrevs").map { try $0.decode(String.self) })
            // UTC is both a zone and an abbreviation, and the same offset either way.
            let accepted = TimeZone.knownTimeZoneIdentifiers.filter(TimeZoneName.isValid)
            #expect(accepted.count > 300)
            #expect(accepted.filter { !known.contains($0) || abbreviations.contains($0) } == [])
            // And the server checks the database too, so a name only Foundation knows is refused, not a 500.
            let token = try await harness.activeUser()
            let id = try #require(UUID(uuidString: try await harness.accountID(token)))
            let refused = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    do {
                        _ = try await TimeZoneStore.setTimeZone(
                            "Europe/Nowhere", for: id, onlyIfUnknown: false, on: connection, logger: TestDatabase.logger)
                        return false
                    } catch is TimeZoneStore.UnknownZone { return true }
                }
            }
            #expect(refused)
        }
    }

    @Test("zone changes racing uploads leave every rollup equal to its samples on the final zone's days")
    func zoneChangesRacingUploads() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let records = Self.stepRecords(days: Self.dstDays, seed: 5)
            let batches = stride(from: 0, to: records.count, by: 20).map { Array(records[$0..<min($0 + 20, records.count)]) }
            let zones = ["Europe/Rome", "America/New_York", "Asia/Tokyo", "Europe/Rome", "Pacific/Auckland", "America/New_York"]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for batch in batches {
                    group.addTask {
                        let response = try await harness.upload(batch.map { ("step_count", $0.value, $0.text) }, token: token)
                        #expect(response.status == .ok, "\(harness.text(response))")
                    }
                }
                for zone in zones {
                    group.addTask {
                        // A change that finds another one rebuilding answers 503 at once: retry as a client would.
                        for _ in 0..<200 {
                            let response = try await harness.request(.patch, "/v1/me", json: #"{"timeZone":"\#(zone)"}"#, token: token)
                            if response.status == .ok { return }
                            #expect(response.status == .serviceUnavailable, "\(harness.text(response))")
                            #expect(response.headers[.retryAfter] != nil)
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        Issue.record("the zone change to \(zone) never got through")
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await harness.int(ConsistencyChecks.rollupMismatches) == 0)
            #expect(try await harness.int("SELECT count(*) FROM samples") == records.count)
        }
    }

    @Test("a zone change while another holds the person's row answers 503 at once, changing nothing")
    func zoneChangeDoesNotWait() async throws {
        // With a 120 s lock timeout, a change that waited for the row would outlast the bound below many times.
        try await TestHarness.run(configure: { $0.database.lockTimeout = .seconds(120) }) { harness in
            let token = try await harness.activeUser()
            let id = try #require(UUID(uuidString: try await harness.accountID(token)))
            try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    try await connection.query("SELECT 1 FROM users WHERE account_id = \(id) FOR UPDATE", logger: TestDatabase.logger)
                    let started = ContinuousClock.now
                    let response = try await harness.request(.patch, "/v1/me", json: #"{"timeZone":"Europe/Rome"}"#, token: token)
                    #expect(response.status == .serviceUnavailable, "\(harness.text(response))")
                    // NOWAIT, not the lock timeout: a bound that only a wait for the lock would exceed.
                    #expect(ContinuousClock.now - started < .seconds(60))
                }
            }
            #expect(try await harness.int("SELECT count(*) FROM users WHERE time_zone IS NOT NULL") == 0)
        }
    }

    @Test("an upload naming an invalid time zone is refused whole")
    func invalidUploadZoneStoresNothing() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.request(
                .post, "/v1/me/samples", json: Self.uploadJSON([("step_count", 100, "2026-10-29T12:00:00Z")], timeZone: "Europe/Atlantis"),
                token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["timeZone"])
            let id = try await harness.accountID(token)
            #expect(try await harness.int("SELECT count(*) FROM samples WHERE user_id = '\(id)'") == 0)
            #expect(try await harness.int("SELECT count(*) FROM users WHERE account_id = '\(id)' AND time_zone IS NOT NULL") == 0)
        }
    }

    @Test("group filters and cells use each person's daily totals, not the mean of a record")
    func groupCellsAreDistributionsOfDailyTotals() async throws {
        // Without noise (only tests can turn it off), the figures are exact up to the released resolution.
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            // Six people walking 30+ short records a day, whole days in Rome; record means are about 200 steps.
            var expectedTotals: [[String: Double]] = []
            for person in 0..<6 {
                let token = try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
                let records = Self.stepRecords(days: Array(Self.dstDays[0..<3]), seed: UInt64(100 + person))
                // Two heart-rate readings a day too, 60 and 80: a mean type beside a total in one request.
                let heart: [Triple] = Self.dstDays[0..<3].flatMap { day in
                    [
                        ("heart_rate", 60.0, Self.text(Self.romeTime(day, 9, 0), offsetOf: Self.rome)),
                        ("heart_rate", 80.0, Self.text(Self.romeTime(day, 21, 0), offsetOf: Self.rome)),
                    ]
                }
                try await Self.upload(harness, token, records.map { ("step_count", $0.value, $0.text) } + heart, timeZone: "Europe/Rome")
                expectedTotals.append(Self.totals(records, in: Self.rome))
            }
            let company = try await harness.activeCompany()
            let body =
                #"{"types":["step_count","heart_rate"],"filters":[{"type":"step_count","min":4000},{"type":"heart_rate","min":69,"max":71}],"demographics":{},"#
                + #""window":{"from":"2026-10-22","to":"2026-10-24"},"bucket":"day","purposeCode":"HRESCH","purpose":"Study"}"#
            let created = try await harness.request(.post, "/v1/group-requests", json: body, token: company)
            // Everyone's mean daily total is several thousand: a per-record mean (~200) would match no one.
            try #require(created.status == .created, "create answered \(created.status): \(harness.text(created))")
            let id = try #require(try harness.object(created)["id"] as? String)
            let results = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
            let allCells = GroupFixtures.released(results)
            let heartCells = allCells.filter { $0["type"] as? String == "heart_rate" }
            #expect(heartCells.count == 3 && heartCells.allSatisfy { ($0["mean"] as? NSNumber)?.doubleValue == 70 && $0["people"] as? Int == 6 })
            let cells = allCells.filter { $0["type"] as? String == "step_count" }
            #expect(cells.map { $0["bucketStart"] as? String } == Array(Self.dstDays[0..<3]))
            for cell in cells {
                let day = try #require(cell["bucketStart"] as? String)
                let totals = expectedTotals.map { $0[day]! }
                #expect(cell["people"] as? Int == 6)
                let mean = try #require((cell["mean"] as? NSNumber)?.doubleValue)
                // Steps are summed whole and the mean released whole.
                #expect(abs(mean - totals.reduce(0, +) / 6) <= 1, "\(day): \(mean)")
                // The median is the grid candidate (every 50 steps) the mechanism centres on.
                let median = try #require((cell["p50"] as? NSNumber)?.doubleValue)
                #expect(Self.close(median, GroupFixtures.gridPercentile(0.5, of: totals, type: .stepCount)), "\(day): \(median)")
            }
        }
    }

    @Test("peer statistics compare daily totals: each peer's figure for a month is their mean daily total")
    func peersCompareDailyTotals() async throws {
        try await TestHarness.run(configure: { $0.groupMinCohort = 3 }, noise: NoNoise()) { harness in
            var peerTotals: [[String: Double]] = []
            for (index, birth) in StatisticsFixtures.peerBirthDates.prefix(3).enumerated() {
                let id = try #require(UUID(uuidString: try await harness.insertPerson(birthDate: birth, sex: "F")))
                _ = try await harness.sql("UPDATE users SET time_zone = 'Europe/Rome' WHERE account_id = '\(id)'")
                let records = Self.stepRecords(days: Self.dstDays, seed: UInt64(200 + index))
                try await TestDatabase.withClient(harness.databaseURL) { client in
                    try await client.ingest(
                        records.map { Sample(type: .stepCount, value: $0.value, at: $0.at) }, for: id)
                }
                peerTotals.append(Self.totals(records, in: Self.rome))
            }
            // The exact October cells the mechanism is given (peer cells are monthly): each peer's figure is the
            // mean of their local days' totals, placed on the steps' grid (every 50).
            // A per-record mean (a few hundred steps) would put all three near 0.
            let cells = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withConnection { connection in
                    try await PeerCellStore.exactCells(
                        month: CalendarDate(iso: "2026-10-01")!, type: .stepCount, on: connection, logger: TestDatabase.logger)
                }
            }
            let occupied = cells.filter { $0.aggregate.people > 0 }
            #expect(occupied.count == 1)
            let cell = try #require(occupied.first)
            #expect(cell.sex == .female && cell.aggregate.people == 3)
            let bounds = ContributionBounds.of(.stepCount)
            let figures = peerTotals.map { totals in Self.dstDays.map { totals[$0]! }.reduce(0, +) / Double(Self.dstDays.count) }
            var expected = [Int64](repeating: 0, count: 2 * bounds.bins + 1)
            for figure in figures {
                // On a candidate (every 50 steps): place 2j; between candidates j and j + 1: 2j + 1.
                let steps = min(max(figure, bounds.lower), bounds.upper) / bounds.binWidth
                expected[abs(steps - steps.rounded()) < 1e-9 ? 2 * Int(steps.rounded()) : 2 * Int(steps.rounded(.down)) + 1] += 1
            }
            #expect(cell.aggregate.bins == expected)
            #expect(figures.allSatisfy { $0 > 2000 })
            let centred = figures.map { Int64((min(max($0, bounds.lower), bounds.upper) - bounds.middle).rounded()) }.reduce(0, +)
            #expect(abs(cell.aggregate.centredSum - centred) <= 3)
        }
    }

    @Test("migration 0007 moves stored sleep to its wake-up day and leaves other rollups alone")
    func migrationMovesSleep() async throws {
        let all = try Migration.bundled()
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                let logger = TestDatabase.logger
                _ = try await Migrator(client: client, migrations: all.filter { $0.version <= 6 }, logger: logger).migrate()
                let id = UUID()
                try await client.query(
                    "INSERT INTO accounts (id, role, email, status) VALUES (\(id), 'user', 'sleeper@example.com', 'active')", logger: logger)
                try await client.query(
                    """
                    INSERT INTO users (account_id, fiscal_code, full_name, birth_date, sex)
                    VALUES (\(id), 'RSSMRA90A41F205X', 'Sleeper', '1990-01-01', 'F')
                    """, logger: logger)
                // As 0006's ingest left them: rollups on the UTC day of `at`.
                try await client.query(
                    """
                    INSERT INTO samples (user_id, type, at, value, arrival) VALUES
                        (\(id), 9, '2026-10-24T22:00:00Z', 8, 1), (\(id), 1, '2026-10-24T22:00:00Z', 60, 2)
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO daily_rollups (user_id, type, day, count, sum, sum_squares, min, max) VALUES
                        (\(id), 9, '2026-10-24', 1, 8, 64, 8, 8), (\(id), 1, '2026-10-24', 1, 60, 3600, 60, 60)
                    """, logger: logger)
                _ = try await Migrator(client: client, migrations: all, logger: logger).migrate()
                let rows = try await client.query(
                    "SELECT type, to_char(day, 'YYYY-MM-DD'), sum FROM daily_rollups WHERE user_id = \(id) ORDER BY type", logger: logger
                ).collect().map { try $0.decode((Int16, String, Double).self) }
                #expect(rows.map(\.0) == [1, 9])
                #expect(rows.map(\.1) == ["2026-10-24", "2026-10-25"])
                #expect(rows.map(\.2) == [60, 8])
            }
        }
    }

    @Test("the new vital types are accepted within their ranges and refused outside them")
    func newTypes() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let valid: [Triple] = [
                ("body_temperature", 36.8, "2026-10-29T08:00:00Z"), ("respiratory_rate", 14, "2026-10-29T08:00:00Z"),
                ("resting_heart_rate", 58, "2026-10-29T08:00:00Z"), ("heart_rate_variability", 42.5, "2026-10-29T08:00:00Z"),
                ("blood_glucose", 5.4, "2026-10-29T08:00:00Z"), ("vo2_max", 41.2, "2026-10-29T08:00:00Z"),
            ]
            try await Self.upload(harness, token, valid)
            for (type, value, _) in valid {
                let (body, own) = try await StatisticsFixtures.statistics(harness, token, "type=\(type)&from=2026-10-29&to=2026-10-29")
                #expect(body["aggregation"] as? String == "mean", "\(type)")
                #expect(own.first?.mean == value, "\(type)")
            }
            // A single request for two of them releases exactly those, as stored.
            let parties = try await harness.requestParties()
            try await Self.upload(harness, parties.person, valid)
            let id = try await harness.acceptedRequestID(parties, types: ["body_temperature", "blood_glucose"])
            let released = try await harness.download(id, token: parties.company)
            #expect(released.items.map(\.type).sorted() == ["blood_glucose", "body_temperature"])
            #expect(released.items.map(\.value).sorted() == [5.4, 36.8])

            let invalid: [Triple] = [
                ("body_temperature", 98.6, "2026-10-29T09:00:00Z"),  // °F sent as °C
                ("blood_glucose", 99, "2026-10-29T09:00:00Z"),  // mg/dL sent as mmol/L
                ("heart_rate_variability", 0, "2026-10-29T09:00:00Z"),
            ]
            let response = try await harness.upload(invalid, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["samples[0].value", "samples[1].value", "samples[2].value"])
            #expect(harness.text(response).contains("30–45 °C for body_temperature"))
            #expect(harness.text(response).contains("1–50 mmol/L for blood_glucose"))
        }
    }
}
