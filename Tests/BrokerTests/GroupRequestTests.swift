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

/// Group requests with k = 5, as functions: the count gate, filters, results checked against an
/// independent computation over the raw samples, and subscriptions that release each bucket once. The
/// privacy module's noise is switched off here (`NoNoise`, which only tests can inject) so that figures
/// are exact where the mechanism is exact under zero noise; what the noise and the budget protect against
/// is in `GroupPrivacyAttackTests` and `GroupPrivacyLedgerTests`.
@Suite("Group requests", .serialized)
struct GroupRequestTests {
    func create(
        _ harness: TestHarness, _ token: String, filters: String = "[]", demographics: String = "{}", types: String = #"["heart_rate"]"#,
        subscription: String? = nil, window: String = #"{"from":"2026-03-01","to":"2026-03-02"}"#
    ) async throws -> [String: Any] {
        let body =
            #"{"types":\#(types),"filters":\#(filters),"demographics":\#(demographics),"window":\#(window),"bucket":"day","purposeCode":"HRESCH","purpose":"Study"\#(subscription.map { #","subscription":{"days":\#($0)}"# } ?? "")}"#
        let response = try await harness.request(.post, "/v1/group-requests", json: body, token: token)
        try #require(response.status == .created, "create answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    func hr(_ min: Double, _ max: Double) -> String { #"[{"type":"heart_rate","min":\#(min),"max":\#(max)}]"# }

    @Test("the count gate: k − 1 people refused without the count, exactly k accepted, inclusive bounds")
    func countGate() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            // The five women at exactly 70: the lower bound is inclusive.
            let exactlyK = try await create(harness, company, filters: hr(70, 70.5))
            #expect(exactlyK["status"] as? String == "accepted")
            #expect(exactlyK["cohortSize"] as? Int == 5)
            #expect(GroupFixtures.number(exactlyK["cellLoss"]) == 0.01)
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
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            var members = (0..<4).map { _ in GroupFixtures.Member(heartRate: [1: [70]]) }
            _ = try await GroupFixtures.populate(harness, members)
            let company = try await harness.activeCompany()
            let fourPeople = try await create(harness, company, filters: hr(60, 80))
            #expect(fourPeople["refusalReason"] as? String == "cohort_below_threshold")
            members = [GroupFixtures.Member(heartRate: [1: [72]])]
            _ = try await GroupFixtures.populate(harness, members)
            let fivePeople = try await create(harness, company, filters: hr(60, 80))
            #expect(fivePeople["status"] as? String == "accepted")
        }
    }

    /// The pairwise similarity check is gone (issue 16): it could not stop differencing (trackers, cells
    /// whose contributors differ by one, erased histories) and was itself an oracle. Cohorts one person apart
    /// are accepted like any other; what protects is the noise on every figure and the budget that bounds how
    /// many figures there are (`GroupPrivacyAttackTests`).
    @Test("cohorts one person apart are accepted (no similarity refusal); each release is debited")
    func similarCohortsAreAccepted() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let otherCompany = try await harness.activeCompany(.init(vatNumber: TestHarness.uniqueVATNumber()))
            // Women at 70–71: six people.
            #expect(try await create(harness, company, filters: hr(65, 72))["cohortSize"] as? Int == 6)
            // Plus one (all seven women), from another company; minus one (the five at exactly 70); the same again.
            let plusOne = try await create(harness, otherCompany, demographics: #"{"sex":"F"}"#)
            #expect(plusOne["status"] as? String == "accepted")
            #expect(plusOne["cohortSize"] as? Int == 7)
            let minusOne = try await create(harness, company, filters: hr(69, 70))
            #expect(minusOne["status"] as? String == "accepted")
            #expect(minusOne["cohortSize"] as? Int == 5)
            #expect(try await create(harness, otherCompany, filters: hr(60, 72.5))["status"] as? String == "accepted")
            #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE refusal_reason IS NOT NULL") == 0)
            // Each accepted request paid for its cohort size and its two cells: (2 + 1) × 0.01.
            let spent = try harness.object(try await harness.request(.get, "/v1/privacy/budget", token: company))
            #expect(abs((GroupFixtures.number(spent["spent"]) ?? 0) - 0.06) < 1e-9)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger") == 8)
        }
    }

    @Test("several filters and demographics all hold (AND)")
    func andSemantics() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let men = try await create(
                harness, company, filters: #"[{"type":"heart_rate","min":60,"max":100},{"type":"step_count","min":8000}]"#)
            #expect(men["cohortSize"] as? Int == 6)
            let none = try await create(
                harness, company, filters: #"[{"type":"heart_rate","max":80},{"type":"step_count","min":8000}]"#)
            #expect(none["refusalReason"] as? String == "cohort_below_threshold")
            let older = try await create(harness, company, filters: hr(0, 300), demographics: #"{"ageMin":40,"ageMax":60}"#)
            #expect(older["cohortSize"] as? Int == 6)
            let youngWomen = try await create(harness, company, demographics: #"{"ageMax":39,"sex":"F"}"#)
            #expect(youngWomen["cohortSize"] as? Int == 7)
        }
    }

    @Test("results equal an independent computation over the raw samples (mean; percentiles on the grid); small cells suppressed")
    func resultsAndSuppression() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            // Day 1: six people; day 2: only three of them have data.
            let members: [GroupFixtures.Member] = [
                GroupFixtures.Member(heartRate: [1: [60, 64], 2: [70]]), GroupFixtures.Member(heartRate: [1: [72], 2: [75, 77, 79]]),
                GroupFixtures.Member(heartRate: [1: [80], 2: [81]]),
                GroupFixtures.Member(heartRate: [1: [66, 67, 68]]), GroupFixtures.Member(heartRate: [1: [90]]),
                GroupFixtures.Member(heartRate: [1: [55.5]]),
            ]
            _ = try await GroupFixtures.populate(harness, members)
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
            // Each figure is summed at 0.01 beats/min and the mean released at that resolution.
            #expect(abs((GroupFixtures.number(day1["mean"]) ?? 0) - means.reduce(0, +) / 6) <= 0.01)
            for (key, fraction) in [("p10", 0.1), ("p50", 0.5), ("p90", 0.9)] {
                let released = try #require(GroupFixtures.number(day1[key]), "\(key)")
                #expect(abs(released - GroupFixtures.gridPercentile(fraction, of: means, type: .heartRate)) < 1e-9, "\(key): \(released)")
            }
            // Where people are dense the grid's median is within a step or two (0.25 beats/min) of the exact one.
            #expect(abs((GroupFixtures.number(day1["p50"]) ?? 0) - GroupFixtures.percentile(means, 0.5)) <= 3)
            #expect(day1["unit"] as? String == "beats/min")
            // Every cell says how noisy it is: σ of each noise from ρ = 0.01 (a tenth to the count, 45 % to the
            // sum, 15 % to each percentile; heart rate is clamped to 40–160, so one person moves the sum by 60).
            let accuracy = try #require(day1["accuracy"] as? [String: Any])
            #expect(abs((GroupFixtures.number(accuracy["peopleStdDev"]) ?? 0) - (1 / (2 * 0.001)).squareRoot()) < 0.01)
            #expect(abs((GroupFixtures.number(accuracy["sumStdDev"]) ?? 0) - (6000.0 * 6000 / (2 * 0.0045)).squareRoot() * 0.01) < 0.01)
            #expect(GroupFixtures.number(accuracy["percentileRho"]) == 0.0015)
            #expect(GroupFixtures.number(accuracy["percentileStep"]) == 0.25)
            #expect(accuracy["binStdDev"] == nil && accuracy["binWidth"] == nil)
            // Six people: p50's rank is uncertain by far more than a person (ε = √(8 · 0.0015) ≈ 0.11).
            #expect((GroupFixtures.number(accuracy["percentileRankMargin95"]) ?? 0) > 1)
            for key in ["p10Margin95", "p50Margin95", "p90Margin95"] { #expect((GroupFixtures.number(accuracy[key]) ?? 0) > 0, "\(key)") }
            #expect(GroupFixtures.number(accuracy["rho"]) == 0.01)
            #expect((GroupFixtures.number(accuracy["meanMargin95"]) ?? 0) > 0)
            #expect(day2["suppressed"] as? Bool == true)
            for key in ["people", "mean", "p10", "p50", "p90"] { #expect(day2[key] == nil || day2[key] is NSNull, "\(key)") }
            let suppressedAccuracy = try #require(day2["accuracy"] as? [String: Any])
            #expect(suppressedAccuracy["meanMargin95"] == nil || suppressedAccuracy["meanMargin95"] is NSNull)

            let csv = try await harness.request(.get, "/v1/group-requests/\(id)/results?format=csv", token: company)
            let lines = harness.text(csv).split(separator: "\r\n").map(String.init)
            #expect(
                lines.first
                    == "bucket_start,type,unit,people,mean,p10,p50,p90,suppressed,people_sd,sum_sd,bin_sd,bin_width,mean_margin95,rho,"
                    + "percentile_rho,percentile_step,p10_margin95,p50_margin95,p90_margin95")
            let last = try #require(lines.last).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(Array(last.prefix(9)) == ["2026-03-02", "heart_rate", "beats/min", "", "", "", "", "", "true"])
            #expect(last.count == 20)
            #expect(Double(last[9]) == GroupFixtures.number(suppressedAccuracy["peopleStdDev"]))
            // No histogram (bin_sd, bin_width) since issue 32, and no margins for a suppressed cell.
            #expect(Array(last[11...]) == ["", "", "", "0.01", "0.0015", "0.25", "", "", ""])
        }
    }

    @Test("week buckets average each person's samples of the week first, then across people")
    func weekBuckets() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            // 2026-03-02 is a Monday: days 2–4 fall in one ISO week, day 9 in the next.
            let members: [GroupFixtures.Member] = (0..<5).map { index in
                GroupFixtures.Member(heartRate: [2: [60 + Double(index)], 3: [70, 80], 9: [90]])
            }
            _ = try await GroupFixtures.populate(harness, members)
            let company = try await harness.activeCompany()
            let body =
                #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":0,"max":300}],"window":{"from":"2026-03-02","to":"2026-03-15"},"bucket":"week","purposeCode":"HRESCH","purpose":"Weekly"}"#
            let created = try await harness.request(.post, "/v1/group-requests", json: body, token: company)
            let id = try #require(try harness.object(created)["id"] as? String)
            let results = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
            let items = try #require(results["items"] as? [[String: Any]])
            #expect(items.map { $0["bucketStart"] as? String } == ["2026-03-02", "2026-03-09"])
            // Person i's first week: (60 + i + 70 + 80) / 3 — every day of the week, not only its Monday.
            let firstWeek = (0..<5).map { (60 + Double($0) + 150) / 3 }
            #expect(items.map { $0["people"] as? Int } == [5, 5])
            #expect(abs((GroupFixtures.number(items[0]["mean"]) ?? 0) - firstWeek.reduce(0, +) / 5) <= 0.01)
            #expect(GroupFixtures.number(items[0]["p50"]) == GroupFixtures.gridPercentile(0.5, of: firstWeek, type: .heartRate))
            #expect(GroupFixtures.number(items[1]["mean"]) == 90)
            #expect(
                GroupFixtures.number(items[1]["p90"]) == GroupFixtures.gridPercentile(0.9, of: Array(repeating: 90, count: 5), type: .heartRate))
        }
    }

    @Test("a one-off window that ends mid-week holds only the window's days in its last week")
    func oneOffWindowClipsItsLastBucket() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            // Monday 2 at 60, Wednesday 4 at 100: a window to Tuesday 3 holds only Monday's figure.
            _ = try await GroupFixtures.populate(harness, (0..<5).map { _ in GroupFixtures.Member(heartRate: [2: [60], 4: [100]]) })
            let company = try await harness.activeCompany()
            let body =
                #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2026-03-02","to":"2026-03-03"},"bucket":"week","purposeCode":"HRESCH","purpose":"Clipped"}"#
            let id = try #require(
                try harness.object(try await harness.request(.post, "/v1/group-requests", json: body, token: company))["id"] as? String)
            let items = try #require(
                try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))["items"] as? [[String: Any]])
            #expect(items.map { $0["bucketStart"] as? String } == ["2026-03-02"])
            #expect(GroupFixtures.number(items.first?["mean"]) == 60)
        }
    }

    @Test("a subscription releases each bucket once, after it closes: not today, released cells never change")
    func subscriptionReleasesEachClosedBucketOnce() async throws {
        struct Day1: Sendable { var company: String, id: String, ids: [UUID], first: [String] }
        try await GroupFixtures.acrossADay(
            configure: GroupFixtures.refreshEverySecond, noise: NoNoise(),
            before: { harness in
                let ids = try await GroupFixtures.populate(harness, (0..<6).map { _ in GroupFixtures.Member() })
                for day in [5, 4, 2] { try await GroupFixtures.upload(harness, ids, heartRate: 70, on: GroupFixtures.daysAgo(day), hour: 9) }
                let company = try await harness.activeCompany()
                let request = try await create(
                    harness, company, filters: hr(0, 300), subscription: "30",
                    window: #"{"from":"\#(GroupFixtures.daysAgo(6))","to":"\#(GroupFixtures.daysAgo(4))"}"#)
                let id = try #require(request["id"] as? String)
                #expect((request["subscription"] as? [String: Any])?["status"] as? String == "active")
                // Released at creation: every closed day from the window's start, past its end (a subscription runs on).
                let read = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
                let first = try #require(read["items"] as? [[String: Any]])
                #expect(first.map { $0["bucketStart"] as? String } == (3...6).reversed().map { GroupFixtures.daysAgo($0).description })
                #expect(GroupFixtures.released(read).map { $0["people"] as? Int } == [6, 6])
                #expect(try await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(id)'") == 1)
                // Before the next day closes: a late upload into a released day and into the next one, and an erasure.
                try await GroupFixtures.upload(harness, [ids[0]], heartRate: 150, on: GroupFixtures.daysAgo(4), hour: 20)
                try await GroupFixtures.upload(harness, [ids[0]], heartRate: 150, on: GroupFixtures.daysAgo(2), hour: 20)
                _ = try await harness.sql("DELETE FROM accounts WHERE id = '\(ids[1])'")  // as an erasure leaves it
                return Day1(company: company, id: id, ids: ids, first: try first.map(GroupFixtures.canonical))
            },
            after: { harness, day1 in
                let (company, id) = (day1.company, day1.id)
                let releases = "SELECT count(*) FROM group_releases WHERE request_id = '\(id)'"
                // The day before yesterday has closed: the background refresh releases it once, with what had arrived by then.
                #expect(await eventually { (try? await harness.int(releases)) == 2 })
                let read = try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company)
                let cells = try #require(try harness.object(read)["items"] as? [[String: Any]])
                #expect(cells.map { $0["bucketStart"] as? String } == (2...6).reversed().map { GroupFixtures.daysAgo($0).description })
                #expect(try await harness.int(releases) == 2)
                let newest = try #require(cells.last)
                #expect(newest["people"] as? Int == 5)
                #expect(GroupFixtures.number(newest["mean"]) == 78.0)  // (110 + 4 × 70) / 5: her two readings that day, and four at 70
                // The released days never change: not by the late upload, not by the erasure.
                #expect(try cells.prefix(4).map(GroupFixtures.canonical) == day1.first)

                // Nothing else has closed: reads return the same release, byte for byte; today is not released.
                let remaining = day1.ids.filter { $0 != day1.ids[1] }
                try await GroupFixtures.upload(harness, remaining, heartRate: 80, on: CalendarDate.today)
                try await GroupFixtures.upload(harness, remaining, heartRate: 80, on: GroupFixtures.daysAgo(1))
                let again = try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company)
                #expect(again.body == read.body)
                #expect(try await harness.int(releases) == 2)
                let ledger = try await harness.sql(
                    "SELECT cells, loss_micro FROM privacy_ledger WHERE request_id = '\(id)' AND kind = 'release' ORDER BY id")
                #expect(try ledger.map { try $0.decode((Int32, Int64).self) }.map { [Int64($0.0), $0.1] } == [[4, 40_000], [1, 10_000]])

                let ended = try await harness.request(.delete, "/v1/group-requests/\(id)/subscription", token: company)
                #expect((try harness.object(ended)["subscription"] as? [String: Any])?["status"] as? String == "ended")
                #expect(try await harness.request(.delete, "/v1/group-requests/\(id)/subscription", token: company).status == .conflict)
            })
    }

    @Test("a subscription none of whose buckets has closed is accepted and releases nothing yet")
    func subscriptionWithNothingClosed() async throws {
        try await TestHarness.run(
            configure: {
                GroupFixtures.smallK(&$0)
                GroupFixtures.closedThroughTwoDaysAgo(&$0)
            }, noise: NoNoise()
        ) { harness in
            let ids = try await GroupFixtures.populate(harness, (0..<6).map { _ in GroupFixtures.Member() })
            try await GroupFixtures.upload(harness, ids, heartRate: 70, on: GroupFixtures.daysAgo(1))
            let company = try await harness.activeCompany()
            let request = try await create(
                harness, company, filters: hr(0, 300), subscription: "30",
                window: #"{"from":"\#(GroupFixtures.daysAgo(1))","to":"\#(CalendarDate.today)"}"#)
            #expect(request["status"] as? String == "accepted")
            let id = try #require(request["id"] as? String)
            let results = try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company)
            #expect(results.status == .conflict)
            #expect(try harness.object(results)["type"] as? String == "https://data4help.example/problems/not-released")
            #expect(try await harness.int("SELECT count(*) FROM group_releases") == 0)
            #expect(try await harness.int("SELECT count(*) FROM access_log WHERE request_id = '\(id)'") == 0)
            // Only the cohort's size was released (and paid for).
            let ledger = try await harness.sql("SELECT kind, loss_micro FROM privacy_ledger WHERE request_id = '\(id)'")
            #expect(try ledger.map { try $0.decode((String, Int64).self) }.map { "\($0.0) \($0.1)" } == ["cohort 10000"])
        }
    }

    @Test("a live subscription's newly closed bucket becomes a release and reaches the sender's webhook without a read")
    func backgroundRefreshAnnouncesNewResults() async throws {
        struct Day1: Sendable { var company: String, id: String, ids: [UUID] }
        try await WebhookReceiver.run { receiver in
            try await GroupFixtures.acrossADay(
                configure: GroupFixtures.refreshEverySecond, noise: NoNoise(),
                before: { harness in
                    let ids = try await GroupFixtures.populate(harness, (0..<6).map { _ in GroupFixtures.Member() })
                    try await GroupFixtures.upload(harness, ids, heartRate: 70, on: GroupFixtures.daysAgo(4))
                    try await GroupFixtures.upload(harness, ids, heartRate: 80, on: GroupFixtures.daysAgo(2))
                    let company = try await WebhookFixtures.company(harness, url: receiver.url("refresh")).token
                    let request = try await create(
                        harness, company, filters: hr(0, 300), subscription: "30",
                        window: #"{"from":"\#(GroupFixtures.daysAgo(4))","to":"\#(GroupFixtures.daysAgo(4))"}"#)
                    let id = try #require(request["id"] as? String)
                    // Looked at every second, but nothing closes today: neither released nor announced.
                    try await Task.sleep(for: .milliseconds(2500))
                    #expect(try await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(id)'") == 1)
                    #expect(
                        try await harness.int(
                            "SELECT count(*) FROM group_requests WHERE id = '\(id)' AND results_checked_at > now() - interval '2 seconds'") == 1)
                    #expect(await receiver.log.delivered("refresh").isEmpty)
                    return Day1(company: company, id: id, ids: ids)
                },
                after: { harness, day1 in
                    let (company, id) = (day1.company, day1.id)
                    let releases = "SELECT count(*) FROM group_releases WHERE request_id = '\(id)'"
                    // The next day the day before yesterday has closed: the background release takes it within a second.
                    #expect(await eventually { await receiver.log.delivered("refresh").count == 1 })
                    let delivered = try #require(await receiver.log.delivered("refresh").first)
                    let event = try #require(try JSONSerialization.jsonObject(with: delivered.body) as? [String: Any])
                    #expect(event["type"] as? String == "group_request.results_updated")
                    #expect((event["data"] as? [String: Any])?["requestId"] as? String == id)
                    #expect(try await harness.int(releases) == 2)

                    // The company reads the release the refresh stored; nothing new has closed, so no new release.
                    let read = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
                    let cells = GroupFixtures.released(read)
                    #expect(
                        cells.map { $0["bucketStart"] as? String } == [GroupFixtures.daysAgo(4).description, GroupFixtures.daysAgo(2).description])
                    #expect(cells.map { GroupFixtures.number($0["mean"]) } == [70, 80])
                    #expect(cells.last?["people"] as? Int == 6)
                    try await GroupFixtures.upload(harness, day1.ids, heartRate: 90, on: GroupFixtures.daysAgo(1))
                    try await Task.sleep(for: .milliseconds(2500))
                    #expect(try await harness.int(releases) == 2)
                    #expect(await receiver.log.delivered("refresh").count == 1)
                })
        }
    }

    @Test("the refresh leaves one-off, ended and refused requests alone; concurrent reads release nothing; one access-log entry a day")
    func refreshScopeAndConcurrentReads() async throws {
        struct Day1: Sendable { var company: String, oneOff: String, ended: String, refused: String, live: String }
        try await WebhookReceiver.run { receiver in
            try await GroupFixtures.acrossADay(
                configure: GroupFixtures.refreshEverySecond, noise: NoNoise(),
                before: { harness in
                    let window = #"{"from":"\#(GroupFixtures.daysAgo(6))","to":"\#(GroupFixtures.daysAgo(3))"}"#
                    let ids = try await GroupFixtures.populate(harness, (0..<6).map { _ in GroupFixtures.Member() })
                    try await GroupFixtures.upload(harness, ids, heartRate: 70, on: GroupFixtures.daysAgo(5))
                    try await GroupFixtures.upload(harness, ids, heartRate: 75, on: GroupFixtures.daysAgo(2))
                    let company = try await WebhookFixtures.company(harness, url: receiver.url("scope")).token
                    let oneOff = try #require(try await create(harness, company, filters: hr(0, 300), window: window)["id"] as? String)
                    let ended = try #require(
                        try await create(harness, company, filters: hr(0, 300), subscription: "30", window: window)["id"] as? String)
                    #expect(try await harness.request(.delete, "/v1/group-requests/\(ended)/subscription", token: company).status == .ok)
                    let refused = try #require(
                        try await create(harness, company, filters: hr(250, 300), subscription: "30", window: window)["id"] as? String)
                    let live = try #require(
                        try await create(harness, company, filters: hr(0, 300), subscription: "30", window: window)["id"] as? String)
                    // The refresh leaves the live subscription alone until the next server lets it.
                    _ = try await harness.sql("UPDATE group_requests SET results_checked_at = 'infinity' WHERE id = '\(live)'")
                    return Day1(company: company, oneOff: oneOff, ended: ended, refused: refused, live: live)
                },
                after: { harness, day1 in
                    let (company, live) = (day1.company, day1.live)
                    func releases(_ id: String) async throws -> Int {
                        try await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(id)'")
                    }
                    // Six reads at once of a subscription whose next bucket has closed: they release nothing.
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for _ in 0..<6 {
                            group.addTask {
                                try await harness.sendOnNewConnection(
                                    .get, "/v1/group-requests/\(live)/results",
                                    headers: [.authorization: "Bearer \(company)"]
                                ).status.code
                            }
                        }
                        for try await status in group { #expect(status == 200) }
                    }
                    #expect(try await releases(live) == 1)

                    // Let the refresh run a few times over everything: it releases the closed bucket once, and nothing else changes.
                    _ = try await harness.sql("UPDATE group_requests SET results_checked_at = NULL WHERE id = '\(live)'")
                    #expect(await eventually { await receiver.log.delivered("scope").count == 1 })
                    try await Task.sleep(for: .milliseconds(2500))
                    #expect(try await releases(day1.oneOff) == 1)
                    #expect(try await releases(day1.ended) == 1)
                    #expect(try await releases(day1.refused) == 0)
                    #expect(try await releases(live) == 2)
                    #expect(await receiver.log.delivered("scope").count == 1)
                    #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE results_checked_at IS NULL") == 1)  // the refused one

                    // Two releases of the live subscription today, one entry in each member's access log for it.
                    #expect(try await harness.int("SELECT count(*) FROM access_log WHERE request_id = '\(live)'") == 6)
                })
        }
    }

    @Test("reading a subscription's results changes nothing: the API's GET and the console's page write no release, ledger, audit or access-log row")
    func readingResultsChangesNothing() async throws {
        struct Day1: Sendable { var company: String, email: String, id: String }
        // The refresh is off, so a closed bucket stays unreleased: whatever a read wrote would show.
        let refreshOff: @Sendable (inout BrokerConfiguration) -> Void = {
            GroupFixtures.smallK(&$0)
            $0.groupResultsRefreshInterval = nil
        }
        try await GroupFixtures.acrossADay(
            configure: refreshOff, noise: NoNoise(),
            before: { harness in
                let ids = try await GroupFixtures.populate(harness, (0..<6).map { _ in GroupFixtures.Member() })
                try await GroupFixtures.upload(harness, ids, heartRate: 70, on: GroupFixtures.daysAgo(4))
                try await GroupFixtures.upload(harness, ids, heartRate: 80, on: GroupFixtures.daysAgo(2))
                let account = TestHarness.Company()
                let company = try await harness.activeCompany(account)
                let request = try await create(
                    harness, company, filters: hr(0, 300), subscription: "30",
                    window: #"{"from":"\#(GroupFixtures.daysAgo(4))","to":"\#(GroupFixtures.daysAgo(4))"}"#)
                return Day1(company: company, email: account.email, id: try #require(request["id"] as? String))
            },
            after: { harness, day1 in
                // The day before yesterday has closed since the release at creation.
                func writes() async throws -> [String] {
                    var counts: [String] = []
                    for table in ["group_releases", "privacy_ledger", "privacy_person_loss", "audit_events", "access_log", "webhook_events"] {
                        counts.append("\(table) \(try await harness.int("SELECT count(*) FROM \(table)"))")
                    }
                    let through = try await harness.sql("SELECT released_through::text FROM group_requests WHERE id = '\(day1.id)'")
                    counts.append("released through \(try through.first?.decode(String?.self) ?? "nothing")")
                    return counts
                }
                let before = try await writes()
                let api = try await harness.request(.get, "/v1/group-requests/\(day1.id)/results", token: day1.company)
                #expect(api.status == .ok)
                #expect(
                    GroupFixtures.released(try harness.object(api)).map { $0["bucketStart"] as? String } == [GroupFixtures.daysAgo(4).description])
                let csv = try await harness.request(.get, "/v1/group-requests/\(day1.id)/results?format=csv", token: day1.company)
                #expect(csv.status == .ok)
                let browser = ConsoleBrowser(harness)
                _ = try await browser.logIn(day1.email, TestHarness.Company().password)
                let page = try await browser.get("/company/group-requests/\(day1.id)")
                #expect(page.status == .ok)
                #expect(browser.lastPage.contains(GroupFixtures.daysAgo(4).description))
                #expect(try await browser.get("/company/group-requests/\(day1.id)/results.csv").status == .ok)
                #expect(try await writes() == before)
            })
    }

    @Test("a server with the refresh off (GROUP_RESULTS_REFRESH_INTERVAL=0) keeps serving: the stopped loop does not end it")
    func refreshOffKeepsServing() async throws {
        // A service that returns ends a ServiceGroup; the loop that is off must wait for shutdown instead.
        try await TestHarness.run(configure: { $0.groupResultsRefreshInterval = nil }) { harness in
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await harness.request(.get, "/health/live").status == .ok)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await harness.request(.get, "/health/live").status == .ok)
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

    /// The evaluation reads each filter's type on a connection of its own and intersects (issue 33): the
    /// cohort must be exactly the one statement's over all filters, whatever the filters mix: types of both
    /// aggregations, two filters on one type, none, demographics, a person who blocked the company and one
    /// who stopped sharing a filter's type.
    @Test("a cohort read filter by filter side by side is the single statement's cohort, blocks and unshared types included")
    func cohortFilterByFilter() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let ids = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try #require(UUID(uuidString: try await harness.accountID(try await harness.activeCompany())))
            // A woman at 70 blocks the company; a man stops sharing his steps.
            try await harness.sql("INSERT INTO blocks (user_id, third_party_id) VALUES ('\(ids[0])', '\(company)')")
            try await harness.sql("INSERT INTO unshared_types (user_id, type) VALUES ('\(ids[7])', \(SampleType.stepCount.code))")
            let anyone = GroupRequest.Demographics(ageMin: nil, ageMax: nil, sex: nil)
            let cases: [(filters: [GroupRequest.Filter], demographics: GroupRequest.Demographics, expected: Int)] = [
                ([], anyone, 12),
                ([.init(type: .heartRate, min: 60, max: 80)], anyone, 6),
                ([.init(type: .heartRate, min: 0, max: 300), .init(type: .stepCount, min: 8000, max: nil)], anyone, 5),
                ([.init(type: .heartRate, min: 70, max: nil), .init(type: .heartRate, min: nil, max: 71)], anyone, 5),
                (
                    [.init(type: .stepCount, min: nil, max: 6000), .init(type: .heartRate, min: 71, max: 300)],
                    .init(ageMin: nil, ageMax: 39, sex: .female), 2
                ),
                ([.init(type: .heartRate, min: nil, max: 80), .init(type: .stepCount, min: 8000, max: nil)], anyone, 0),
            ]
            try await TestDatabase.withClient(harness.databaseURL) { client in
                let service = GroupRequestService(
                    client: client, minimumCohort: GroupFixtures.k, evaluations: EvaluationSlots(slots: 2, timeout: .seconds(30)))
                let from = try #require(CalendarDate(iso: "2026-03-01"))
                let to = try #require(CalendarDate(iso: "2026-03-02"))
                for (filters, demographics, expected) in cases {
                    let sideBySide = try await service.matchingCohort(
                        filters: filters, demographics: demographics, from: from, to: to, excludingBlocksOf: company, logger: TestDatabase.logger)
                    let oneStatement = try await client.withConnection { connection in
                        try await GroupCohortStore.cohort(
                            filters: filters, demographics: demographics, from: from, to: to, excludingBlocksOf: company, on: connection,
                            logger: TestDatabase.logger)
                    }
                    #expect(sideBySide == oneStatement, "filters \(filters)")
                    #expect(sideBySide.count == expected, "filters \(filters)")
                }
            }
        }
    }

    @Test("members' access logs show an anonymised contribution; releases are audited")
    func accessLogAndAudit() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            var person = TestHarness.Person()
            person.fiscalCode = TestHarness.uniqueFiscalCode()
            let token = try await harness.activeUser(person)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: token)
            _ = try await GroupFixtures.populate(harness, (0..<5).map { _ in GroupFixtures.Member(heartRate: [1: [70]]) })
            let company = try await harness.activeCompany()
            let request = try await create(harness, company, filters: hr(0, 300))
            let log = try harness.object(try await harness.request(.get, "/v1/me/access-log", token: token))
            let entry = try #require((log["items"] as? [[String: Any]])?.first)
            #expect(entry["kind"] as? String == "group")
            #expect(entry["samples"] == nil || entry["samples"] is NSNull)
            #expect(entry["requestId"] as? String == request["id"] as? String)
            #expect((entry["description"] as? String)?.contains("anonymised aggregate") == true)
            // One entry per member (the person and the five), written without looking for earlier ones: the
            // request is new.
            #expect(try await harness.int("SELECT count(*) FROM access_log WHERE request_id = '\(request["id"] as! String)'") == 6)
            #expect(try await harness.int("SELECT count(DISTINCT user_id) FROM access_log WHERE request_id = '\(request["id"] as! String)'") == 6)
            let actions = try await harness.sql("SELECT action FROM audit_events WHERE request_id = '\(request["id"] as! String)' ORDER BY seq")
            #expect(try actions.map { try $0.decode(String.self) } == ["group_request.accepted", "group_request.results_released"])
            // Each says what it spent: the cohort's size one cell (ρ 0.01), the release its two days (ρ 0.02).
            let spent = try await harness.sql(
                "SELECT details->>'rho' FROM audit_events WHERE request_id = '\(request["id"] as! String)' ORDER BY seq")
            #expect(try spent.map { try $0.decode(String.self) } == ["0.01", "0.02"])
        }
    }

    @Test("validation: every invalid field named, nothing stored")
    func validation() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let company = try await harness.activeCompany()
            let response = try await harness.request(
                .post, "/v1/group-requests",
                json:
                    #"{"types":["mood"],"filters":[{"type":"heart_rate","min":90,"max":60}],"demographics":{"ageMin":-1},"window":{"from":"2026-13-01","to":"2026-03-01"},"bucket":"day","purposeCode":"HRESCH","purpose":""}"#,
                token: company)
            #expect(response.status == .unprocessableContent)
            #expect(
                Set(try harness.errorFields(response)) == [
                    "types[0]", "filters[0].min", "demographics.ageMin", "window.from", "purpose",
                ])
            let badSex = try await harness.request(
                .post, "/v1/group-requests",
                json:
                    #"{"types":["heart_rate"],"demographics":{"sex":"X"},"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"x"}"#,
                token: company)
            #expect(badSex.status == .unprocessableContent)
            let nothing = try await harness.request(
                .post, "/v1/group-requests",
                json:
                    #"{"types":["heart_rate"],"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"x"}"#,
                token: company)
            #expect(try harness.errorFields(nothing) == ["filters"])
            // A cell may cost 0.001–0.1; one release holds at most 400 cells (401 days of one type is one too many).
            let costly = try await harness.request(
                .post, "/v1/group-requests",
                json:
                    #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2025-01-01","to":"2026-02-05"},"bucket":"day","purposeCode":"HRESCH","purpose":"x","privacy":{"cellLoss":0.5}}"#,
                token: company)
            #expect(costly.status == .unprocessableContent)
            #expect(Set(try harness.errorFields(costly)) == ["privacy.cellLoss", "window"])
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 0)
        }
    }
}
