import Broker
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing

/// Group requests with k = 5: the count gate, the differencing defence, filters, and results checked
/// against an independent computation over the raw samples.
@Suite("Group requests", .serialized)
struct GroupRequestTests {
    static let k = 5
    static func smallK(_ configuration: inout BrokerConfiguration) { configuration.groupMinCohort = k }

    /// A person and their daily heart-rate readings (day of March 2026 → values) and steps.
    struct Member: Sendable {
        var sex = "F"
        var birthDate = "1990-05-01"
        var heartRate: [Int: [Double]] = [:]
        var steps: Double? = nil
    }

    /// Inserts the people and stores their samples through the real ingest (rollups included); returns ids.
    static func populate(_ harness: TestHarness, _ members: [Member]) async throws -> [UUID] {
        var ids: [UUID] = []
        for member in members {
            ids.append(try #require(UUID(uuidString: try await harness.insertPerson(birthDate: member.birthDate, sex: member.sex))))
        }
        let people = ids
        try await TestDatabase.withClient(harness.databaseURL) { client in
            let store = SampleStore(client: client)
            for (member, id) in zip(members, people) {
                var samples: [Sample] = []
                for (day, values) in member.heartRate {
                    for (index, value) in values.enumerated() {
                        samples.append(Sample(type: .heartRate, value: value, at: Self.date(day: day, hour: 8 + index)))
                    }
                }
                if let steps = member.steps { samples.append(Sample(type: .stepCount, value: steps, at: Self.date(day: 1, hour: 20))) }
                _ = try await store.ingest(samples, for: id, logger: TestDatabase.logger)
            }
        }
        return ids
    }

    static func date(day: Int, hour: Int) -> Date {
        Timestamp.parse(String(format: "2026-03-%02dT%02d:00:00Z", day, hour))!
    }

    /// Five women at heart rate 70, one at 71, one at 75; six men at 90 with many steps.
    static var standard: [Member] {
        var members = (0..<5).map { _ in Member(heartRate: [1: [70], 2: [70]], steps: 5000) }
        members.append(Member(heartRate: [1: [71], 2: [71]], steps: 5000))
        members.append(Member(heartRate: [1: [75], 2: [75]], steps: 5000))
        members += (0..<6).map { _ in Member(sex: "M", birthDate: "1980-05-01", heartRate: [1: [90], 2: [90]], steps: 9000) }
        return members
    }

    func create(_ harness: TestHarness, _ token: String, filters: String = "[]", demographics: String = "{}", types: String = #"["heart_rate"]"#,
                subscription: String? = nil, window: String = #"{"from":"2026-03-01","to":"2026-03-02"}"#) async throws -> [String: Any] {
        let body = #"{"types":\#(types),"filters":\#(filters),"demographics":\#(demographics),"window":\#(window),"bucket":"day","purpose":"Study"\#(subscription.map { #","subscription":{"days":\#($0)}"# } ?? "")}"#
        let response = try await harness.request(.post, "/v1/group-requests", json: body, token: token)
        try #require(response.status == .created, "create answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    /// k = 5, local webhook receivers, and live group subscriptions recomputed every second.
    static func refreshEverySecond(_ configuration: inout BrokerConfiguration) {
        smallK(&configuration)
        WebhookTests.fast(&configuration)
        configuration.groupResultsRefreshInterval = .seconds(1)
    }

    /// One heart-rate reading at today's midnight (UTC) for each person, through the real ingest.
    static func uploadToday(_ harness: TestHarness, _ people: [UUID], heartRate: Double) async throws {
        let midnight = Date(timeIntervalSince1970: Double(CalendarDate.today.dayNumber * 86_400))
        try await TestDatabase.withClient(harness.databaseURL) { client in
            for person in people {
                _ = try await SampleStore(client: client).ingest(
                    [Sample(type: .heartRate, value: heartRate, at: midnight)], for: person, logger: TestDatabase.logger)
            }
        }
    }

    /// The cells of a results answer that carry figures (not suppressed).
    static func released(_ results: [String: Any]) -> [[String: Any]] {
        (results["items"] as? [[String: Any]] ?? []).filter { $0["suppressed"] as? Bool == false }
    }

    func hr(_ min: Double, _ max: Double) -> String { #"[{"type":"heart_rate","min":\#(min),"max":\#(max)}]"# }

    @Test("the count gate: k − 1 people refused without the count, exactly k accepted, inclusive bounds")
    func countGate() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            _ = try await Self.populate(harness, Self.standard)
            let company = try await harness.activeCompany()
            // The five women at exactly 70: the lower bound is inclusive.
            let exactlyK = try await create(harness, company, filters: hr(70, 70.5))
            #expect(exactlyK["status"] as? String == "accepted")
            #expect(exactlyK["cohortSize"] as? Int == 5)
            // The women at 71 and 75: two people, refused, and the answer carries no count.
            let two = try await create(harness, company, filters: hr(70.5, 75))
            #expect(two["status"] as? String == "refused")
            #expect(two["refusalReason"] as? String == "cohort_below_threshold")
            #expect(two["cohortSize"] == nil)
            let none = try await create(harness, company, filters: hr(100, 200))
            #expect(none["refusalReason"] as? String == "cohort_below_threshold")
        }
    }

    @Test("k − 1 matching people are refused; one more person makes k and is accepted")
    func exactlyKMinusOne() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            var members = (0..<4).map { _ in Member(heartRate: [1: [70]]) }
            _ = try await Self.populate(harness, members)
            let company = try await harness.activeCompany()
            let fourPeople = try await create(harness, company, filters: hr(60, 80))
            #expect(fourPeople["refusalReason"] as? String == "cohort_below_threshold")
            members = [Member(heartRate: [1: [72]])]
            _ = try await Self.populate(harness, members)
            let fivePeople = try await create(harness, company, filters: hr(60, 80))
            #expect(fivePeople["status"] as? String == "accepted")
        }
    }

    @Test("the differencing defence: plus or minus one person refused; identical or ≥ k apart accepted")
    func differencing() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            _ = try await Self.populate(harness, Self.standard)
            let company = try await harness.activeCompany()
            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherCompany = try await harness.activeCompany(other)
            // Women at 70–71: six people.
            #expect(try await create(harness, company, filters: hr(65, 72))["cohortSize"] as? Int == 6)
            // Plus one (all seven women), from another company: the difference would single out one person.
            let plusOne = try await create(harness, otherCompany, demographics: #"{"sex":"F"}"#)
            #expect(plusOne["refusalReason"] as? String == "cohort_too_similar")
            // Minus one (the five at exactly 70).
            let minusOne = try await create(harness, company, filters: hr(69, 70))
            #expect(minusOne["refusalReason"] as? String == "cohort_too_similar")
            // The identical cohort again: nothing new can be learned.
            #expect(try await create(harness, otherCompany, filters: hr(60, 72.5))["status"] as? String == "accepted")
            // Everyone (13): six or more apart from every released cohort.
            #expect(try await create(harness, company, filters: hr(0, 300))["status"] as? String == "accepted")
            let refusals = try await harness.int("SELECT count(*) FROM group_requests WHERE refusal_reason = 'cohort_too_similar'")
            #expect(refusals == 2)
        }
    }

    @Test("several filters and demographics all hold (AND)")
    func andSemantics() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            _ = try await Self.populate(harness, Self.standard)
            let company = try await harness.activeCompany()
            let men = try await create(
                harness, company, filters: #"[{"type":"heart_rate","min":60,"max":100},{"type":"step_count","min":8000}]"#)
            #expect(men["cohortSize"] as? Int == 6)
            let none = try await create(
                harness, company, filters: #"[{"type":"heart_rate","max":80},{"type":"step_count","min":8000}]"#)
            #expect(none["refusalReason"] as? String == "cohort_below_threshold")
            let older = try await create(harness, company, filters: hr(0, 300), demographics: #"{"ageMin":40,"ageMax":60}"#)
            #expect(older["cohortSize"] as? Int == 6)  // the same six men: an identical cohort reveals nothing new
            let youngWomen = try await create(harness, company, demographics: #"{"ageMax":39,"sex":"F"}"#)
            #expect(youngWomen["cohortSize"] as? Int == 7)
        }
    }

    @Test("results equal an independent computation over the raw samples; small cells suppressed beside released ones")
    func resultsAndSuppression() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            // Day 1: six people; day 2: only three of them have data.
            let members: [Member] = [
                Member(heartRate: [1: [60, 64], 2: [70]]), Member(heartRate: [1: [72], 2: [75, 77, 79]]), Member(heartRate: [1: [80], 2: [81]]),
                Member(heartRate: [1: [66, 67, 68]]), Member(heartRate: [1: [90]]), Member(heartRate: [1: [55.5]]),
            ]
            _ = try await Self.populate(harness, members)
            let company = try await harness.activeCompany()
            let request = try await create(harness, company, filters: hr(0, 300))
            let id = try #require(request["id"] as? String)
            let response = try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company)
            #expect(response.status == .ok)
            let items = try #require(try harness.object(response)["items"] as? [[String: Any]])
            #expect(items.count == 2)
            let day1 = try #require(items.first { $0["bucketStart"] as? String == "2026-03-01" })
            let day2 = try #require(items.first { $0["bucketStart"] as? String == "2026-03-02" })

            let means = members.compactMap { $0.heartRate[1].map { $0.reduce(0, +) / Double($0.count) } }.sorted()
            #expect(day1["people"] as? Int == 6)
            #expect(day1["suppressed"] as? Bool == false)
            #expect(abs((day1["mean"] as? Double ?? 0) - means.reduce(0, +) / 6) < 1e-9)
            for (key, fraction) in [("p10", 0.1), ("p50", 0.5), ("p90", 0.9)] {
                #expect(abs((day1[key] as? Double ?? 0) - Self.percentile(means, fraction)) < 1e-9, "\(key)")
            }
            #expect(day1["unit"] as? String == "beats/min")
            #expect(day2["suppressed"] as? Bool == true)
            for key in ["people", "mean", "p10", "p50", "p90"] { #expect(day2[key] == nil || day2[key] is NSNull, "\(key)") }

            let csv = try await harness.request(.get, "/v1/group-requests/\(id)/results?format=csv", token: company)
            let lines = harness.text(csv).split(separator: "\r\n").map(String.init)
            #expect(lines.first == "bucket_start,type,unit,people,mean,p10,p50,p90,suppressed")
            #expect(lines.last == "2026-03-02,heart_rate,beats/min,,,,,,true")
        }
    }

    @Test("week buckets average each person's samples of the week first, then across people")
    func weekBuckets() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            // 2026-03-02 is a Monday: days 2–4 fall in one ISO week, day 9 in the next.
            let members: [Member] = (0..<5).map { index in
                Member(heartRate: [2: [60 + Double(index)], 3: [70, 80], 9: [90]])
            }
            _ = try await Self.populate(harness, members)
            let company = try await harness.activeCompany()
            let body = #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":0,"max":300}],"window":{"from":"2026-03-02","to":"2026-03-15"},"bucket":"week","purpose":"Weekly"}"#
            let created = try await harness.request(.post, "/v1/group-requests", json: body, token: company)
            let id = try #require(try harness.object(created)["id"] as? String)
            let results = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
            let items = try #require(results["items"] as? [[String: Any]])
            #expect(items.map { $0["bucketStart"] as? String } == ["2026-03-02", "2026-03-09"])
            // Person i's first week: (60 + i + 70 + 80) / 3; their means are spread evenly, so p50 is the middle one.
            let firstWeek = (0..<5).map { (60 + Double($0) + 150) / 3 }
            #expect(abs((items[0]["p50"] as? Double ?? 0) - firstWeek[2]) < 1e-9)
            #expect(abs((items[0]["mean"] as? Double ?? 0) - firstWeek.reduce(0, +) / 5) < 1e-9)
            #expect(items[1]["p90"] as? Double == 90)
        }
    }

    /// percentile_cont: linear interpolation between the closest ranks.
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        let position = fraction * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down)), upper = Int(position.rounded(.up))
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    @Test("a subscription's buckets grow with new uploads; erased people drop out of later results")
    func subscriptionAndErasure() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            let today = CalendarDate.today
            let yesterday = today.adding(days: -1)
            let ids = try await Self.populate(harness, (0..<6).map { _ in Member(heartRate: [1: [70]]) })
            let company = try await harness.activeCompany()
            let request = try await create(
                harness, company, filters: hr(0, 300), subscription: "30", window: #"{"from":"2026-03-01","to":"\#(yesterday)"}"#)
            let id = try #require(request["id"] as? String)
            #expect((request["subscription"] as? [String: Any])?["status"] as? String == "active")
            let first = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
            // Every day from the window's start to today is a cell; the days nobody contributed to are
            // suppressed like any other small cell, so "no one" and "a few" look the same.
            let days = today.dayNumber - (try #require(CalendarDate(year: 2026, month: 3, day: 1))).dayNumber + 1
            #expect((first["items"] as? [[String: Any]])?.count == days)
            #expect(Self.released(first).map { $0["bucketStart"] as? String } == ["2026-03-01"])
            #expect((first["items"] as? [[String: Any]])?.dropFirst().allSatisfy { $0["suppressed"] as? Bool == true && $0["people"] as? Int == nil && $0["mean"] as? Double == nil } == true)

            try await Self.uploadToday(harness, ids, heartRate: 80)
            let second = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
            let cells = Self.released(second)
            #expect(cells.map { $0["bucketStart"] as? String } == ["2026-03-01", today.description])
            #expect(cells.last?["people"] as? Int == 6)

            _ = try await harness.sql("DELETE FROM accounts WHERE id = '\(ids[0])'")  // as an erasure leaves it
            let third = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
            #expect(Self.released(third).map { $0["people"] as? Int } == [5, 5])
            #expect(try await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(id)'") == 3)
            // An unchanged answer is not a new release.
            _ = try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company)
            #expect(try await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(id)'") == 3)

            let ended = try await harness.request(.delete, "/v1/group-requests/\(id)/subscription", token: company)
            #expect((try harness.object(ended)["subscription"] as? [String: Any])?["status"] as? String == "ended")
            #expect(try await harness.request(.delete, "/v1/group-requests/\(id)/subscription", token: company).status == .conflict)
        }
    }

    @Test("a live subscription's new figures become a release and reach the sender's webhook without a read")
    func backgroundRefreshAnnouncesNewResults() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: Self.refreshEverySecond) { harness in
                let today = CalendarDate.today
                let ids = try await Self.populate(harness, (0..<6).map { _ in Member(heartRate: [1: [70]]) })
                let company = try await WebhookTests().company(harness, url: receiver.url("refresh")).token
                let request = try await create(
                    harness, company, filters: hr(0, 300), subscription: "30",
                    window: #"{"from":"2026-03-01","to":"\#(today.adding(days: -1))"}"#)
                let id = try #require(request["id"] as? String)
                let releases = "SELECT count(*) FROM group_releases WHERE request_id = '\(id)'"

                try await Self.uploadToday(harness, ids, heartRate: 80)
                #expect(await eventually { await receiver.log.delivered("refresh").count == 1 })
                let delivered = try #require(await receiver.log.delivered("refresh").first)
                let event = try #require(try JSONSerialization.jsonObject(with: delivered.body) as? [String: Any])
                #expect(event["type"] as? String == "group_request.results_updated")
                #expect((event["data"] as? [String: Any])?["requestId"] as? String == id)
                #expect(try await harness.int(releases) == 2)

                // The company reads the release the refresh stored; nothing new, so no new release.
                let read = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
                let cells = Self.released(read)
                #expect(cells.map { $0["bucketStart"] as? String } == ["2026-03-01", today.description])
                #expect(cells.last?["people"] as? Int == 6)
                // Unchanged figures are checked again each second but are neither released nor announced.
                try await Task.sleep(for: .milliseconds(2500))
                #expect(try await harness.int(releases) == 2)
                #expect(await receiver.log.delivered("refresh").count == 1)
                #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE id = '\(id)' AND results_checked_at > now() - interval '2 seconds'") == 1)
            }
        }
    }

    @Test("the refresh leaves one-off, ended and refused requests alone; concurrent reads store new figures once; one access-log entry a day")
    func refreshScopeAndConcurrentReads() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: Self.refreshEverySecond) { harness in
                let today = CalendarDate.today
                let window = #"{"from":"2026-03-01","to":"\#(today.adding(days: -1))"}"#
                let ids = try await Self.populate(harness, (0..<6).map { _ in Member(heartRate: [1: [70]]) })
                let company = try await WebhookTests().company(harness, url: receiver.url("scope")).token
                func releases(_ id: String) async throws -> Int {
                    try await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(id)'")
                }
                // The same cohort each time (identical cohorts pass the differencing defence).
                let oneOff = try #require(try await create(harness, company, filters: hr(0, 300), window: window)["id"] as? String)
                let ended = try #require(try await create(harness, company, filters: hr(0, 300), subscription: "30", window: window)["id"] as? String)
                #expect(try await harness.request(.delete, "/v1/group-requests/\(ended)/subscription", token: company).status == .ok)
                let refused = try #require(try await create(harness, company, filters: hr(250, 300), subscription: "30", window: window)["id"] as? String)
                let live = try #require(try await create(harness, company, filters: hr(0, 300), subscription: "30", window: window)["id"] as? String)
                // Only the live subscription takes part in the refresh from now on.
                _ = try await harness.sql("UPDATE group_requests SET results_checked_at = 'infinity' WHERE id = '\(live)'")

                try await Self.uploadToday(harness, ids, heartRate: 80)
                // Six reads at once: the new figures are stored and announced once.
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<6 {
                        group.addTask { try await harness.sendOnNewConnection(.get, "/v1/group-requests/\(live)/results",
                                                                              headers: [.authorization: "Bearer \(company)"]).status.code }
                    }
                    for try await status in group { #expect(status == 200) }
                }
                #expect(try await releases(live) == 2)
                #expect(await eventually { await receiver.log.delivered("scope").count == 1 })

                // Let the refresh run a few times over everything: nothing else changes.
                _ = try await harness.sql("UPDATE group_requests SET results_checked_at = NULL WHERE id = '\(live)'")
                try await Task.sleep(for: .milliseconds(2500))
                #expect(try await releases(oneOff) == 1)
                #expect(try await releases(ended) == 1)
                #expect(try await releases(refused) == 0)
                #expect(try await releases(live) == 2)
                #expect(await receiver.log.delivered("scope").count == 1)
                #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE results_checked_at IS NULL") == 1)  // the refused one

                // Two releases of the live subscription today, one entry in each member's access log for it.
                #expect(try await harness.int("SELECT count(*) FROM access_log WHERE request_id = '\(live)'") == 6)
            }
        }
    }

    @Test("GROUP_RESULTS_REFRESH_INTERVAL: hourly by default, 0 turns it off, anything else but seconds stops the start")
    func refreshIntervalSetting() throws {
        func interval(_ environment: [String: String]) throws -> Duration? {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)).groupResultsRefreshInterval
        }
        #expect(try interval([:]) == .seconds(3600))
        #expect(try interval(["GROUP_RESULTS_REFRESH_INTERVAL": "0"]) == nil)
        #expect(try interval(["GROUP_RESULTS_REFRESH_INTERVAL": "90"]) == .seconds(90))
        for wrong in ["-1", "ten", "1.5", "99999999"] {
            #expect(throws: ConfigurationError.self) { try interval(["GROUP_RESULTS_REFRESH_INTERVAL": wrong]) }
        }
    }

    @Test("members' access logs show an anonymised contribution; releases are audited")
    func accessLogAndAudit() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            var person = TestHarness.Person()
            person.fiscalCode = TestHarness.uniqueFiscalCode()
            let token = try await harness.activeUser(person)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: token)
            _ = try await Self.populate(harness, (0..<5).map { _ in Member(heartRate: [1: [70]]) })
            let company = try await harness.activeCompany()
            let request = try await create(harness, company, filters: hr(0, 300))
            let log = try harness.object(try await harness.request(.get, "/v1/me/access-log", token: token))
            let entry = try #require((log["items"] as? [[String: Any]])?.first)
            #expect(entry["kind"] as? String == "group")
            #expect(entry["samples"] == nil || entry["samples"] is NSNull)
            #expect(entry["requestId"] as? String == request["id"] as? String)
            #expect((entry["description"] as? String)?.contains("anonymised aggregate") == true)
            let actions = try await harness.sql("SELECT action FROM audit_events WHERE request_id = '\(request["id"] as! String)' ORDER BY seq")
            #expect(try actions.map { try $0.decode(String.self) } == ["group_request.accepted", "group_request.results_released"])
        }
    }

    @Test("validation: every invalid field named, nothing stored")
    func validation() async throws {
        try await TestHarness.run(configure: Self.smallK) { harness in
            let company = try await harness.activeCompany()
            let response = try await harness.request(
                .post, "/v1/group-requests",
                json: #"{"types":["mood"],"filters":[{"type":"heart_rate","min":90,"max":60}],"demographics":{"ageMin":-1},"window":{"from":"2026-13-01","to":"2026-03-01"},"bucket":"day","purpose":""}"#,
                token: company)
            #expect(response.status == .unprocessableContent)
            #expect(Set(try harness.errorFields(response)) == [
                "types[0]", "filters[0].min", "demographics.ageMin", "window.from", "purpose",
            ])
            let badSex = try await harness.request(
                .post, "/v1/group-requests",
                json: #"{"types":["heart_rate"],"demographics":{"sex":"X"},"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purpose":"x"}"#,
                token: company)
            #expect(badSex.status == .unprocessableContent)
            let nothing = try await harness.request(
                .post, "/v1/group-requests",
                json: #"{"types":["heart_rate"],"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purpose":"x"}"#, token: company)
            #expect(try harness.errorFields(nothing) == ["filters"])
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 0)
        }
    }
}
