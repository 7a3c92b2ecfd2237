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

/// Each company's share of each person's yearly group cap (issue 32, item 3, `PRIVACY_COMPANY_SHARE`): one
/// company spending all it may take of a cohort leaves those people in every other company's requests; the
/// share is checked under the ledger lock with the cap, reported by the estimate and the budget, and sizes
/// what a request may cost. Figures are exact here (`NoNoise`): the share does not depend on the noise.
///
/// `D4H_SHARE_OLD=1` runs the suite with a share of 1, as the ledger was before the share: one company may
/// then take a person's whole cap, and the attack test must fail.
@Suite("Group privacy: each company's share of a person's cap", .serialized)
struct GroupPrivacyShareTests {
    /// k = 5 and no rate limits; the caps are the defaults (group cap ρ 1.5, share a third: ρ 0.5).
    static func configure(_ configuration: inout BrokerConfiguration) {
        GroupFixtures.smallK(&configuration)
        configuration.rateLimits = .unlimited
        if ProcessInfo.processInfo.environment["D4H_SHARE_OLD"] != nil { configuration.privacy.companyShare = 1 }
    }

    /// Heart rate of the seven women at 60–80 of `GroupFixtures.standard`, `days` day buckets from March 1,
    /// at ρ 0.1 per cell: (days + 1) × 0.1.
    static func request(days: Int, purpose: String = "Share") -> String {
        #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":60,"max":80}],"window":{"from":"2026-03-01","to":"2026-03-0\#(days)"},"bucket":"day","purposeCode":"HRESCH","purpose":"\#(purpose)","privacy":{"cellLoss":0.1}}"#
    }

    static func send(_ harness: TestHarness, _ body: String, _ token: String) async throws -> [String: Any] {
        let response = try await harness.request(.post, "/v1/group-requests", json: body, token: token)
        try #require(response.status == .created, "answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    /// Each person's loss to one company over the last twelve months (ρ millionths), by person number.
    static func lossTo(_ company: String, _ harness: TestHarness) async throws -> [Int32: Int64] {
        let rows = try await harness.sql(
            """
            SELECT person_number, sum(loss_micro)::int8 FROM privacy_person_request_loss
            WHERE company_id = '\(company)' AND month >= (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '11 months')::date
            GROUP BY 1
            """)
        var loss: [Int32: Int64] = [:]
        for row in rows {
            let (person, micro) = try row.decode((Int32, Int64).self)
            loss[person] = micro
        }
        return loss
    }

    /// Before the share, company A could spend the whole group cap (ρ 1.5) of everyone it could select in
    /// four requests (0.3, 0.2, 0.5, 0.5: half its month's budget), and every other company's request found
    /// them left out for the rest of the year — B's was refused as below k. Now A's last two requests are
    /// answered from nobody, B's cohort is the seven women, and so is C's. A company that erases itself and
    /// registers again is a new account with a new share (the documented per-account limit), but the cap
    /// still holds across all of them: once three shares are spent, a fourth company finds no one.
    @Test("attack: company A spending its whole share of a cohort leaves those people in company B's requests; the cap still holds")
    func oneCompanyCannotLockOthersOut() async throws {
        try await TestHarness.run(configure: Self.configure, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let first = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber(), companyName: "Greedy S.r.l.")
            let a = try await harness.activeCompany(first)
            let aID = try await harness.accountID(a)

            // A tries to take the people's whole group cap.
            var statuses: [String] = []
            var sizes: [Int?] = []
            for days in [2, 1, 4, 4] {
                let answer = try await Self.send(harness, Self.request(days: days, purpose: "A"), a)
                statuses.append(answer["status"] as? String ?? "")
                sizes.append(answer["cohortSize"] as? Int)
            }
            #expect(statuses == ["accepted", "accepted", "refused", "refused"], "A took more than its share: \(statuses)")
            #expect(sizes == [7, 7, nil, nil])
            // A took exactly its share of each of the seven, no more.
            let takenByA = try await Self.lossTo(aID, harness)
            #expect(takenByA.count == 7 && takenByA.values.allSatisfy { $0 == 500_000 }, "\(takenByA)")

            // B's request still has them: all seven, in the cohort and in every cell with data.
            let b = try await harness.activeCompany(.init(vatNumber: TestHarness.uniqueVATNumber()))
            let bRequest = try await Self.send(harness, Self.request(days: 4, purpose: "B"), b)
            #expect(bRequest["status"] as? String == "accepted", "A locked B out: \(bRequest)")
            #expect(bRequest["cohortSize"] as? Int == 7)
            let bID = try #require(bRequest["id"] as? String)
            let cells = try harness.object(try await harness.request(.get, "/v1/group-requests/\(bID)/results", token: b))
            // (The women have heart rate on March 1 and 2; the 3rd and 4th are suppressed, no one's data.)
            #expect(GroupFixtures.released(cells).map { $0["people"] as? Int } == [7, 7])
            // B is now at its share too: its next request is answered from nobody, like A's.
            #expect(try await Self.send(harness, Self.request(days: 1, purpose: "B again"), b)["status"] as? String == "refused")

            // A erases itself: what it took stays taken (its rows and the people's totals), and nothing is given back.
            let totalsBefore = try await harness.int("SELECT sum(loss_micro)::int8 FROM privacy_person_loss")
            #expect(try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(first.password)"}"#, token: a).status == .noContent)
            #expect(try await Self.lossTo(aID, harness) == takenByA)
            #expect(try await harness.int("SELECT sum(loss_micro)::int8 FROM privacy_person_loss") == totalsBefore)
            // Registered again under the same VAT number it is a new account, with a share of its own...
            let again = try await harness.activeCompany(.init(vatNumber: first.vatNumber, companyName: "Greedy S.r.l."))
            #expect(try await harness.accountID(again) != aID)
            #expect(try await Self.send(harness, Self.request(days: 4, purpose: "A again"), again)["cohortSize"] as? Int == 7)
            // ...but the cap is the guarantee: three shares have taken ρ 1.5 of each, and a fourth company finds no one.
            let d = try await harness.activeCompany(.init(vatNumber: TestHarness.uniqueVATNumber()))
            let dRequest = try await Self.send(harness, Self.request(days: 1, purpose: "D"), d)
            #expect(dRequest["status"] as? String == "refused")
            #expect(dRequest["refusalReason"] as? String == "cohort_below_threshold")
            let highest = try await harness.int(
                """
                SELECT max(total)::int8 FROM (SELECT sum(loss_micro) AS total FROM privacy_person_loss
                WHERE month >= (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '11 months')::date GROUP BY person_number) t
                """)
            #expect(highest == 1_500_000, "someone's loss is \(highest) millionths of ρ")
            // Each company's share of each person, from the per-request ledger: never above ρ 0.5.
            let perCompany = try await harness.int(
                """
                SELECT coalesce(max(total), 0)::int8 FROM (SELECT sum(loss_micro) AS total FROM privacy_person_request_loss
                GROUP BY company_id, person_number) t
                """)
            #expect(perCompany == 500_000)
        }
    }

    /// The share counts what this company took over the last twelve calendar months, from any of its
    /// requests; what it took thirteen months ago no longer counts, and what others took counts only in the cap.
    @Test("the share counts this company's loss of a person over the last twelve calendar months only")
    func shareWindow() async throws {
        try await TestHarness.run(configure: Self.configure, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let a = try await harness.activeCompany()
            #expect(try await Self.send(harness, Self.request(days: 4), a)["cohortSize"] as? Int == 7)
            #expect(try await Self.send(harness, Self.request(days: 1), a)["status"] as? String == "refused")
            // Eleven months ago still counts; twelve months ago does not.
            _ = try await harness.sql(
                "UPDATE privacy_person_request_loss SET month = (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '11 months')::date")
            #expect(try await Self.send(harness, Self.request(days: 1), a)["status"] as? String == "refused")
            _ = try await harness.sql(
                "UPDATE privacy_person_request_loss SET month = (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '12 months')::date")
            #expect(try await Self.send(harness, Self.request(days: 1), a)["cohortSize"] as? Int == 7)
        }
    }

    /// A subscription's later releases are checked against the share under the ledger lock, like creation:
    /// one whose first release took the whole share releases its next bucket without those people (from
    /// nobody, here), while another company's request still has them.
    @Test("a subscription that has taken its share releases its next bucket without those people; another company still has them")
    func subscriptionReleasesWithinTheShare() async throws {
        struct Day1: Sendable { var company: String, id: String, companyID: String }
        let refreshed: @Sendable (inout BrokerConfiguration) -> Void = {
            Self.configure(&$0)
            $0.groupResultsRefreshInterval = .seconds(1)
        }
        try await GroupFixtures.acrossADay(
            configure: refreshed, noise: NoNoise(),
            before: { harness in
                let ids = try await GroupFixtures.populate(harness, (0..<8).map { _ in GroupFixtures.Member() })
                for day in 2...6 { try await GroupFixtures.upload(harness, ids, heartRate: 70, on: GroupFixtures.daysAgo(day), hour: 9) }
                let company = try await harness.activeCompany()
                // Four closed day buckets and the size at 0.1: the whole share at once.
                let body =
                    #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"\#(GroupFixtures.daysAgo(6))","to":"\#(GroupFixtures.daysAgo(3))"},"bucket":"day","purposeCode":"HRESCH","purpose":"Share","privacy":{"cellLoss":0.1},"subscription":{"days":30}}"#
                let created = try await Self.send(harness, body, company)
                #expect(created["cohortSize"] as? Int == 8)
                let companyID = try await harness.accountID(company)
                #expect(try await Self.lossTo(companyID, harness).values.sorted() == Array(repeating: 500_000, count: 8))
                return Day1(company: company, id: try #require(created["id"] as? String), companyID: companyID)
            },
            after: { harness, day1 in
                // The day before yesterday closes and is released, once, but from no one: all eight are at the share.
                #expect(await eventually { (try? await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(day1.id)'")) == 2 })
                #expect(try await Self.lossTo(day1.companyID, harness).values.sorted() == Array(repeating: 500_000, count: 8))
                let results = try harness.object(try await harness.request(.get, "/v1/group-requests/\(day1.id)/results", token: day1.company))
                #expect(GroupFixtures.released(results).count == 4, "the new bucket was released with people in it")
                // Another company's request has all eight.
                let other = try await harness.activeCompany(.init(vatNumber: TestHarness.uniqueVATNumber()))
                let body =
                    #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"\#(GroupFixtures.daysAgo(3))","to":"\#(GroupFixtures.daysAgo(2))"},"bucket":"day","purposeCode":"HRESCH","purpose":"Other","privacy":{"cellLoss":0.1}}"#
                #expect(try await Self.send(harness, body, other)["cohortSize"] as? Int == 8)
            })
    }

    /// The check runs on every cohort, under the ledger lock: ten thousand members, each with a year of
    /// debits to this company and to others, in one statement that decides per person. (Its speed is the
    /// group-requests bench's to measure, never a timed assertion here.)
    @Test("the cap-and-share check over a 10,000-person cohort is one statement, and decides per person")
    func largeCohort() async throws {
        try await TestHarness.run(configure: Self.configure, noise: NoNoise()) { harness in
            let company = UUID()
            // Each of 10,000 people: ρ 0.1 a month for twelve months in total (1.2 of 1.5); to this company
            // 0.03 a month (0.36 of 0.5), or 0.04 (0.48) for the even ones; and 0.03 a month to two others.
            _ = try await harness.sql(
                """
                INSERT INTO privacy_person_loss (person_number, month, loss_micro)
                SELECT n, (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => k))::date, 100000
                FROM generate_series(1, 10000) n, generate_series(0, 11) k
                """)
            for (owner, micro) in [
                (company.uuidString, "CASE WHEN n % 2 = 0 THEN 40000 ELSE 30000 END"), (UUID().uuidString, "30000"), (UUID().uuidString, "30000"),
            ] {
                _ = try await harness.sql(
                    """
                    INSERT INTO privacy_person_request_loss (person_number, month, company_id, request_id, loss_micro)
                    SELECT n, (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => k))::date, '\(owner)',
                           gen_random_uuid(), \(micro)
                    FROM generate_series(1, 10000) n, generate_series(0, 11) k
                    """)
            }
            _ = try await harness.sql("ANALYZE privacy_person_loss")
            _ = try await harness.sql("ANALYZE privacy_person_request_loss")
            let settings = PrivacySettings()
            let cohort = Array(Int32(1)...Int32(10_000))
            let eligible = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withConnection { connection in
                    try await PrivacyLedgerStore.withinCapAndShare(
                        cohort, cost: PrivacyLoss(rho: 0.1), cap: settings.personGroupBudget, company: company, share: settings.companyShareLoss,
                        on: connection, logger: Logger(label: "share-test"))
                }
            }
            #expect(eligible == cohort.filter { $0 % 2 == 1 })
        }
    }

    @Test("the estimate and the budget report the share; a request dearer than the share is a 422 naming it, and changes nothing")
    func estimateAndBudget() async throws {
        try await TestHarness.run(
            configure: {
                Self.configure(&$0)
                GroupFixtures.closedThroughTwoDaysAgo(&$0)
            }, noise: NoNoise()
        ) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let budget = try harness.object(try await harness.request(.get, "/v1/privacy/budget", token: company))
            #expect(GroupFixtures.number(budget["personCap"]) == 1.5)
            #expect(GroupFixtures.number(budget["personShare"]) == 0.5)
            #expect(abs((GroupFixtures.number(budget["personShareOfCap"]) ?? 0) - 1.0 / 3) < 1e-9)

            // Four cells and the size at 0.1: exactly the share.
            let fits = try harness.object(
                try await harness.request(.post, "/v1/group-requests/estimate", json: Self.request(days: 4), token: company))
            #expect(fits["withinShare"] as? Bool == true && fits["affordable"] as? Bool == true)
            #expect(GroupFixtures.number((fits["budget"] as? [String: Any])?["personShare"]) == 0.5)
            // Five cells: ρ 0.6, within the cap (1.5) and the budget (3), but more than one company may take.
            let dear = try harness.object(
                try await harness.request(.post, "/v1/group-requests/estimate", json: Self.request(days: 5), token: company))
            #expect(abs((GroupFixtures.number(dear["rho"]) ?? 0) - 0.6) < 1e-9)
            #expect(dear["withinShare"] as? Bool == false && dear["affordable"] as? Bool == false)
            let refused = try await harness.request(.post, "/v1/group-requests", json: Self.request(days: 5), token: company)
            #expect(refused.status == .unprocessableContent)
            let errors = try #require(try harness.object(refused)["errors"] as? [[String: Any]])
            #expect(errors.map { $0["field"] as? String } == ["window"])
            let message = errors.first?["message"] as? String ?? ""
            #expect(message.contains("PRIVACY_COMPANY_SHARE") && message.contains("ρ 0.5") && message.contains("ρ 0.6"), "\(message)")
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 0)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger") == 0)

            // A subscription's release is sized by the share: at 0.01 per cell, 49 day buckets and the size (ρ 0.5),
            // however many have closed (99 here).
            let subscription =
                #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"\#(GroupFixtures.daysAgo(100))","to":"\#(CalendarDate.today)"},"bucket":"day","purposeCode":"HRESCH","purpose":"x","subscription":{"days":30}}"#
            let subscribed = try harness.object(
                try await harness.request(.post, "/v1/group-requests/estimate", json: subscription, token: company))
            #expect(subscribed["cells"] as? Int == 49)
            #expect(abs((GroupFixtures.number(subscribed["rho"]) ?? 0) - 0.5) < 1e-9)
            #expect(subscribed["withinShare"] as? Bool == true)
            // And it is accepted, at that size.
            let created = try await Self.send(harness, subscription, company)
            #expect(created["status"] as? String == "accepted")
            #expect(try await harness.int("SELECT sum(cells)::int8 FROM privacy_ledger WHERE kind = 'release'") == 49)
        }
    }

    @Test("a configured share: the budget, the estimate and who is left out follow it")
    func configuredShare() async throws {
        try await TestHarness.run(
            configure: {
                Self.configure(&$0)
                $0.privacy.companyShare = 0.2  // ρ 0.3 of 1.5
            }, noise: NoNoise()
        ) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let budget = try harness.object(try await harness.request(.get, "/v1/privacy/budget", token: company))
            #expect(GroupFixtures.number(budget["personShare"]) == 0.3 && GroupFixtures.number(budget["personShareOfCap"]) == 0.2)
            let three = try harness.object(
                try await harness.request(.post, "/v1/group-requests/estimate", json: Self.request(days: 3), token: company))
            #expect(three["withinShare"] as? Bool == false)
            #expect(
                try await harness.request(.post, "/v1/group-requests", json: Self.request(days: 3), token: company).status == .unprocessableContent)
            #expect(try await Self.send(harness, Self.request(days: 1), company)["cohortSize"] as? Int == 7)  // 0.2
            #expect(try await Self.send(harness, Self.request(days: 1), company)["status"] as? String == "refused")  // 0.4 > 0.3
        }
    }

    @Test("the console shows the share beside the budget, in English and in Italian")
    func console() async throws {
        try await TestHarness.run(configure: Self.configure, noise: NoNoise()) { harness in
            let parties = try await harness.requestParties()
            let company = try await ConsoleBrowser.company(harness, parties)
            for path in ["/company", "/company/group-requests/new"] {
                try await company.get(path)
                #expect(
                    company.lastPage.contains(
                        "From each person you may take at most ρ 0.5 over twelve months (33.3% of their yearly group cap of ρ 1.5)"), "\(path)")
            }
        }
        let budget = CompanyBudget(
            limit: PrivacyLoss(rho: 3), spent: .zero, periodDays: 30, renewsAt: nil, personCap: PrivacyLoss(rho: 0.1),
            personShare: PrivacyLoss(rho: 0.0333), personShareOfCap: 1.0 / 3)
        let italian = ConsoleStrings.$current.withValue(ConsoleCatalog.shared.strings(for: .it)) { Console.budgetSentence(budget) }
        #expect(italian.contains("Da ogni persona puoi prendere al massimo ρ 0,0333 in dodici mesi (il 33,3% del suo limite annuale"), "\(italian)")
    }

    @Test("PRIVACY_COMPANY_SHARE: a third by default; outside (0, 1], or too small for any request, the server does not start")
    func setting() throws {
        func privacy(_ environment: [String: String]) throws -> PrivacySettings {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)).privacy
        }
        let defaults = try privacy([:])
        #expect(defaults.companyShare == 1.0 / 3 && defaults.companyShareLoss == PrivacyLoss(rho: 0.5))
        #expect(defaults.bucketsPerRelease(types: 1, cellLoss: PrivacyLoss(rho: 0.01)) == 49)
        #expect(defaults.bucketsPerRelease(types: 2, cellLoss: PrivacyLoss(rho: 0.1)) == 2)
        #expect(try privacy(["PRIVACY_COMPANY_SHARE": "0.5"]).companyShareLoss == PrivacyLoss(rho: 0.75))
        #expect(try privacy(["PRIVACY_COMPANY_SHARE": "1"]).companyShareLoss == PrivacyLoss(rho: 1.5))
        for wrong in ["0", "-0.2", "1.01", "2", "a third", "nan", "0.001"] {
            #expect(throws: ConfigurationError.self, "PRIVACY_COMPANY_SHARE=\(wrong)") { try privacy(["PRIVACY_COMPANY_SHARE": wrong]) }
        }
        do {
            _ = try privacy(["PRIVACY_COMPANY_SHARE": "0"])
        } catch {
            #expect("\(error)".contains("PRIVACY_COMPANY_SHARE") && "\(error)".contains("above 0 and at most 1"), "\(error)")
        }
    }
}
