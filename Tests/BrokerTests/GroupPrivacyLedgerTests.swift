import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The privacy ledger (issue 16): each company's budget per rolling period (exhaustion, renewal, the last
/// of it raced for), each person's yearly cap (a person whose budget is spent is left out), the estimate
/// before sending, the budget a company sees, the auditors' ledger, and the cost in every release's audit
/// event. Figures are exact here (`NoNoise`): the ledger does not depend on the noise.
@Suite("Group privacy: ledger", .serialized)
struct GroupPrivacyLedgerTests {
    typealias Member = GroupFixtures.Member

    /// k = 5, and a company budget of 0.05: one request of two day cells (0.03) fits, a second does not.
    static func smallBudget(_ configuration: inout BrokerConfiguration) {
        GroupFixtures.smallK(&configuration)
        configuration.rateLimits = .unlimited
        configuration.privacy.companyBudget = 0.05
    }

    /// Heart rate over March 1–2 for the women at 60–80 (seven of `GroupFixtures.standard`): 2 cells, ρ 0.03.
    static let twoCells =
        #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":60,"max":80}],"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"Ledger"}"#
    /// The same over March 1 only: 1 cell, ρ 0.02.
    static let oneCell =
        #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":60,"max":80}],"window":{"from":"2026-03-01","to":"2026-03-01"},"bucket":"day","purposeCode":"HRESCH","purpose":"Ledger"}"#

    static func number(_ value: Any?) -> Double? { GroupFixtures.number(value) }

    /// Counts of everything a group request writes.
    static func footprint(_ harness: TestHarness) async throws -> [Int] {
        var counts: [Int] = []
        for table in ["group_requests", "group_releases", "privacy_ledger", "access_log", "audit_events"] {
            counts.append(try await harness.int("SELECT count(*) FROM \(table)"))
        }
        counts.append(try await harness.int("SELECT coalesce(sum(loss_micro), 0)::int8 FROM privacy_person_loss"))
        return counts
    }

    @Test("exhaustion: 429 privacy-budget-exhausted with renewsAt and Retry-After, nothing stored; the exact remainder is still spendable")
    func exhaustion() async throws {
        try await TestHarness.run(configure: Self.smallBudget, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let fresh = try harness.object(try await harness.request(.get, "/v1/privacy/budget", token: company))
            #expect(Self.number(fresh["rho"]) == 0.05 && Self.number(fresh["spent"]) == 0 && Self.number(fresh["remaining"]) == 0.05)
            #expect(fresh["periodDays"] as? Int == 30)
            #expect(fresh["renewsAt"] == nil)

            let first = try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company)
            #expect(first.status == .created)
            let createdAt = try #require(TestHarness.date(try harness.object(first)["createdAt"]))
            let budget = try harness.object(try await harness.request(.get, "/v1/privacy/budget", token: company))
            #expect(abs((Self.number(budget["spent"]) ?? 0) - 0.03) < 1e-9)
            #expect(abs((Self.number(budget["remaining"]) ?? 0) - 0.02) < 1e-9)
            let renews = try #require(TestHarness.date(budget["renewsAt"]))
            #expect(abs(renews.timeIntervalSince(createdAt) - 30 * 86_400) < 5)

            let before = try await Self.footprint(harness)
            let refused = try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company)
            #expect(refused.status == .tooManyRequests)
            let problem = try harness.object(refused)
            #expect(problem["type"] as? String == "https://data4help.example/problems/privacy-budget-exhausted")
            #expect(refused.headers[.contentType]?.hasPrefix("application/problem+json") == true)
            #expect(abs((TestHarness.date(problem["renewsAt"]) ?? .distantPast).timeIntervalSince(renews)) < 1)
            let retryAfter = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
            #expect(abs(Double(retryAfter) - renews.timeIntervalSinceNow) < 60)
            #expect(try await Self.footprint(harness) == before, "a refused release wrote something")

            // ρ 0.02 is exactly what remains.
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.oneCell, token: company).status == .created)
            let spent = try harness.object(try await harness.request(.get, "/v1/privacy/budget", token: company))
            #expect(abs((Self.number(spent["remaining"]) ?? 1)) < 1e-9)
            // Another company's budget is its own.
            let other = try await harness.activeCompany(.init(vatNumber: TestHarness.uniqueVATNumber()))
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: other).status == .created)
            // A request that costs more than a whole period's budget is a 422, not a wait.
            let tooBig =
                #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-05"},"bucket":"day","purposeCode":"HRESCH","purpose":"x"}"#
            let invalid = try await harness.request(.post, "/v1/group-requests", json: tooBig, token: other)
            #expect(invalid.status == .unprocessableContent)
            #expect(try harness.errorFields(invalid) == ["types"])
        }
    }

    @Test("renewal: once the period's debits are older than the period, the budget is whole again")
    func renewal() async throws {
        try await TestHarness.run(configure: Self.smallBudget, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company).status == .created)
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company).status == .tooManyRequests)
            // One minute short of the period: still counted.
            _ = try await harness.sql("UPDATE privacy_ledger SET at = now() - interval '29 days 23 hours 59 minutes'")
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company).status == .tooManyRequests)
            _ = try await harness.sql("UPDATE privacy_ledger SET at = now() - interval '30 days 1 minute'")
            let budget = try harness.object(try await harness.request(.get, "/v1/privacy/budget", token: company))
            #expect(Self.number(budget["spent"]) == 0)
            #expect(budget["renewsAt"] == nil)
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company).status == .created)
            // The old entries stay in the ledger: they only stop counting.
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger") == 4)
        }
    }

    @Test("two requests racing for the last of a budget: exactly one wins, three times over")
    func raceForTheLastBudget() async throws {
        try await TestHarness.run(configure: Self.smallBudget, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let companyID = try await harness.accountID(company)
            for round in 0..<3 {
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            try await harness.requestOnNewConnection(.post, "/v1/group-requests", json: Self.twoCells, token: company).status
                        }
                    }
                    return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
                }
                #expect(statuses.sorted { $0.code < $1.code } == [.created, .tooManyRequests], "round \(round): \(statuses.map(\.code))")
                let spent = try await harness.int(
                    "SELECT coalesce(sum(loss_micro), 0)::int8 FROM privacy_ledger WHERE company_id = '\(companyID)' AND at > now() - interval '30 days'"
                )
                #expect(spent == 30_000, "round \(round)")
                _ = try await harness.sql("UPDATE privacy_ledger SET at = at - interval '31 days'")
            }
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 3)
        }
    }

    @Test("a company's erasure keeps its requests, releases and ledger entries for the auditors, and the people's loss")
    func erasureKeepsTheLedger() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let auditor = try await harness.activeAuditor()
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let token = try await harness.activeCompany(company)
            let id = try await harness.accountID(token)
            let created = try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: token))
            let requestID = try #require(created["id"] as? String)
            let released = harness.text(try await harness.request(.get, "/v1/audit/group-requests/\(requestID)/results", token: auditor))
            let loss = try await harness.int("SELECT sum(loss_micro)::int8 FROM privacy_person_loss")

            #expect(try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(company.password)"}"#, token: token).status == .noContent)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE company_id = '\(id)'") == 2)
            #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE id = '\(requestID)'") == 1)
            #expect(try await harness.int("SELECT sum(loss_micro)::int8 FROM privacy_person_loss") == loss)
            let ledger = try harness.object(try await harness.request(.get, "/v1/audit/privacy-ledger", token: auditor))
            let entries = try #require(ledger["items"] as? [[String: Any]])
            #expect(entries.map { $0["kind"] as? String } == ["release", "cohort"])
            #expect(entries.allSatisfy { $0["companyId"] as? String == id && $0["requestId"] as? String == requestID })
            #expect(harness.text(try await harness.request(.get, "/v1/audit/group-requests/\(requestID)/results", token: auditor)) == released)
            let listed = harness.text(try await harness.request(.get, "/v1/audit/group-requests", token: auditor))
            #expect(listed.contains(requestID))
            #expect(!listed.contains(company.companyName) && !listed.contains(company.vatNumber))
        }
    }

    /// The requests outlive the company for the auditors; a live subscription must not go on releasing
    /// (and spending people's caps) for a company that no longer exists. Fails if erasure leaves it running.
    @Test("erasing a company ends its live group subscriptions: the background release never picks them again")
    func erasureEndsSubscriptions() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let token = try await harness.activeCompany(company)
            let body =
                #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":60,"max":80}],"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"Ledger","subscription":{"days":365}}"#
            let created = try harness.object(try await harness.request(.post, "/v1/group-requests", json: body, token: token))
            let requestID = try #require(created["id"] as? String)
            #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE id = '\(requestID)' AND ended_at IS NULL") == 1)
            #expect(try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(company.password)"}"#, token: token).status == .noContent)
            #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE id = '\(requestID)' AND ended_at IS NOT NULL") == 1)
        }
    }

    /// Feldman and Zrnic (2021): with individual accounting a person whose budget is spent is left out of
    /// later releases, and only their own loss decides — so no one's total ever passes the cap.
    @Test("each person's yearly cap: a person whose budget is spent is left out; no one ever passes the cap")
    func personCapExcludes() async throws {
        try await TestHarness.run(
            configure: {
                GroupFixtures.smallK(&$0)
                $0.rateLimits = .unlimited
                // A group budget of 0.1 per person per twelve months: three requests of 0.03.
                $0.privacy.personBudget = 0.6
                $0.privacy.peerReserve = 0.5
                // The cap alone, all of it to this one company (the share is GroupPrivacyShareTests').
                $0.privacy.companyShare = 1
            }, noise: NoNoise()
        ) { harness in
            let ids = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            // The first woman at 70 has spent 0.08 this month, elsewhere.
            let spender = try await harness.int("SELECT person_number FROM users WHERE account_id = '\(ids[0])'")
            _ = try await harness.sql(
                "INSERT INTO privacy_person_loss VALUES (\(spender), date_trunc('month', now() AT TIME ZONE 'UTC')::date, 80000)")
            let first = try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company))
            #expect(first["cohortSize"] as? Int == 6)  // seven women at 60–80, less the one who cannot afford 0.03
            let id = try #require(first["id"] as? String)
            let cells = try harness.object(try await harness.request(.get, "/v1/group-requests/\(id)/results", token: company))
            #expect(GroupFixtures.released(cells).map { $0["people"] as? Int } == [6, 6])
            #expect(try await harness.int("SELECT count(*) FROM access_log WHERE user_id = '\(ids[0])'") == 0)
            #expect(try await harness.int("SELECT sum(loss_micro)::int8 FROM privacy_person_loss WHERE person_number = \(spender)") == 80000)

            // Loss from twelve months ago no longer counts: she is back.
            _ = try await harness.sql(
                "UPDATE privacy_person_loss SET month = (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '12 months')::date WHERE person_number = \(spender)"
            )
            let second = try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company))
            #expect(second["cohortSize"] as? Int == 7)

            // The others have now spent 0.06: one more 0.03 each, then they are left out (she alone is not k).
            #expect(
                try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company))["cohortSize"] as? Int
                    == 7)
            let fourth = try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company))
            #expect(fourth["status"] as? String == "refused")
            #expect(fourth["refusalReason"] as? String == "cohort_below_threshold")
            let highest = try await harness.int(
                """
                SELECT max(total)::int8 FROM (SELECT sum(loss_micro) AS total FROM privacy_person_loss
                WHERE month >= (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '11 months')::date GROUP BY person_number) t
                """)
            #expect(highest <= 100_000, "someone's loss reached \(highest) millionths of ρ")
        }
    }

    @Test("the estimate: cost (cells + 1) × cellLoss and each type's noise, from the request alone; nothing read or written; 422s as on creation")
    func estimate() async throws {
        try await TestHarness.run(
            configure: {
                GroupFixtures.smallK(&$0)
                GroupFixtures.closedThroughTwoDaysAgo(&$0)
            }, noise: NoNoise()
        ) { harness in
            let company = try await harness.activeCompany()
            let body =
                #"{"types":["heart_rate","step_count"],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-07"},"bucket":"day","purposeCode":"HRESCH","purpose":"x","privacy":{"cellLoss":0.02}}"#
            let empty = try await harness.request(.post, "/v1/group-requests/estimate", json: body, token: company)
            #expect(empty.status == .ok)
            let estimate = try harness.object(empty)
            #expect(estimate["cells"] as? Int == 14)
            #expect(Self.number(estimate["cellLoss"]) == 0.02)
            let rho = try #require(Self.number(estimate["rho"]))
            #expect(abs(rho - 15 * 0.02) < 1e-9)
            #expect(Self.number(estimate["delta"]) == 1e-7)
            #expect(abs((Self.number(estimate["epsilon"]) ?? 0) - (rho + 2 * (rho * log(1e7)).squareRoot())) < 1e-9)
            #expect(estimate["affordable"] as? Bool == true)
            #expect(Self.number((estimate["budget"] as? [String: Any])?["remaining"]) == 3)
            let types = try #require(estimate["types"] as? [[String: Any]])
            #expect(types.map { $0["type"] as? String } == ["heart_rate", "step_count"])
            // A tenth of 0.02 on the count (σ² = 1/(2 × 0.002) = 250), 45 % on the sum, whose sensitivity is
            // half the clamping range in resolution units (heart rate: 60 / 0.01; steps: 15,000 / 1), and 15 % on
            // each percentile, drawn from the type's grid (heart rate every 0.25 beats/min, steps every 50).
            for (type, sensitivity, resolution, step, bounds) in [
                (types[0], 6000.0, 0.01, 0.25, [40.0, 160]), (types[1], 15_000, 1, 50, [0, 30_000]),
            ] {
                #expect(abs((Self.number(type["peopleStdDev"]) ?? 0) - 250.0.squareRoot()) < 1e-9)
                let sum = (sensitivity * sensitivity / (2 * 0.009)).rounded(.up).squareRoot() * resolution
                #expect(abs((Self.number(type["sumStdDev"]) ?? 0) - sum) < 1e-6 * sum)
                #expect(Self.number(type["percentileRho"]) == 0.003)
                #expect(Self.number(type["percentileStep"]) == step)
                let split = try #require(type["split"] as? [String: Any])
                #expect(Self.number(split["count"]) == 0.1 && Self.number(split["sum"]) == 0.45 && Self.number(split["eachPercentile"]) == 0.15)
                // ε = √(8 · 0.003); the rank margin is ln 20 · 2 · 0.5 / ε people, over k or 10 k people.
                let rank = log(20.0) / (8 * 0.003).squareRoot()
                #expect(abs((Self.number(type["medianRankMargin95AtK"]) ?? 0) - rank / Double(GroupFixtures.k)) < 1e-3)
                #expect(abs((Self.number(type["medianRankMargin95At10K"]) ?? 0) - rank / Double(10 * GroupFixtures.k)) < 1e-3)
                #expect((type["bounds"] as? [NSNumber])?.map(\.doubleValue) == bounds)
                let atK = try #require(Self.number(type["meanMargin95AtK"]))
                let at10K = try #require(Self.number(type["meanMargin95At10K"]))
                #expect(atK > at10K && at10K > 0)
            }

            // The same estimate with people and data in the database: it reads no one's data.
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            var populated = try harness.object(try await harness.request(.post, "/v1/group-requests/estimate", json: body, token: company))
            populated["budget"] = nil
            var alone = estimate
            alone["budget"] = nil
            #expect(NSDictionary(dictionary: populated) == NSDictionary(dictionary: alone))
            #expect(try await Self.footprint(harness).prefix(4) == [0, 0, 0, 0])
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action LIKE 'group_request.%'") == 0)

            // A subscription counts the buckets closed now: through the day before yesterday.
            let subscription =
                #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"\#(GroupFixtures.daysAgo(6))","to":"\#(CalendarDate.today)"},"bucket":"day","purposeCode":"HRESCH","purpose":"x","subscription":{"days":30}}"#
            let subscribed = try harness.object(try await harness.request(.post, "/v1/group-requests/estimate", json: subscription, token: company))
            #expect(subscribed["cells"] as? Int == 5)
            // More than the whole budget: not affordable (and a 422 if sent).
            let huge =
                #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2025-01-01","to":"2026-02-04"},"bucket":"day","purposeCode":"HRESCH","purpose":"x","privacy":{"cellLoss":0.1}}"#
            let unaffordable = try harness.object(try await harness.request(.post, "/v1/group-requests/estimate", json: huge, token: company))
            #expect(unaffordable["cells"] as? Int == 400)
            #expect(unaffordable["affordable"] as? Bool == false)
            #expect(try await harness.request(.post, "/v1/group-requests", json: huge, token: company).status == .unprocessableContent)
            // Invalid bodies: the same field errors as creation.
            let invalid =
                #"{"types":["mood","heart_rate"],"filters":[{"type":"heart_rate","min":90,"max":60}],"window":{"from":"2026-03-01","to":"2027-05-01"},"bucket":"day","purposeCode":"HRESCH","purpose":"","privacy":{"cellLoss":0}}"#
            let refused = try await harness.request(.post, "/v1/group-requests/estimate", json: invalid, token: company)
            #expect(refused.status == .unprocessableContent)
            #expect(Set(try harness.errorFields(refused)) == ["types[0]", "filters[0].min", "purpose", "privacy.cellLoss", "window"])
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 0)
        }
    }

    @Test("auditors page through the ledger, newest first, with a cursor; each release's audit event says what it cost")
    func auditorsLedgerAndAuditEvents() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try await harness.activeCompany()
            let companyID = try await harness.accountID(company)
            let auditor = try await harness.activeAuditor()
            var requests: [String] = []
            for body in [Self.twoCells, Self.oneCell, Self.twoCells.replacingOccurrences(of: #""min":60,"max":80"#, with: #""min":200,"max":300"#)] {
                requests.append(
                    try #require(
                        try harness.object(try await harness.request(.post, "/v1/group-requests", json: body, token: company))["id"] as? String))
            }
            // Two accepted (cohort + release each), one refused (its cohort size only): five entries.
            var entries: [[String: Any]] = []
            var cursor: String?
            repeat {
                let page = try harness.object(
                    try await harness.request(
                        .get, "/v1/audit/privacy-ledger?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), token: auditor))
                let items = try #require(page["items"] as? [[String: Any]])
                #expect(items.count <= 2)
                entries += items
                cursor = page["nextCursor"] as? String
            } while cursor != nil && entries.count < 20
            #expect(entries.count == 5)
            let ids = entries.compactMap { ($0["id"] as? String).flatMap { Int($0) } }
            #expect(ids == ids.sorted(by: >) && Set(ids).count == 5)
            #expect(entries.map { $0["kind"] as? String } == ["cohort", "release", "cohort", "release", "cohort"])
            #expect(entries.map { $0["requestId"] as? String } == [requests[2], requests[1], requests[1], requests[0], requests[0]])
            #expect(entries.map { $0["cells"] as? Int } == [1, 1, 1, 2, 1])
            #expect(entries.map { Self.number($0["rho"]) } == [0.01, 0.01, 0.01, 0.02, 0.01])
            #expect(entries.allSatisfy { $0["companyId"] as? String == companyID })
            #expect(try await harness.request(.get, "/v1/audit/privacy-ledger?cursor=abc", token: auditor).status == .unprocessableContent)
            #expect(try await harness.request(.get, "/v1/audit/privacy-ledger", token: company).status == .forbidden)

            let events = try harness.object(try await harness.request(.get, "/v1/audit/events?limit=1000", token: auditor))
            let group = try #require(events["items"] as? [[String: Any]]).filter { ($0["action"] as? String)?.hasPrefix("group_") == true }
            #expect(
                group.map { $0["action"] as? String } == [
                    "group_request.accepted", "group_request.results_released", "group_request.accepted", "group_request.results_released",
                    "group_request.refused",
                ])
            #expect(group.map { ($0["details"] as? [String: Any])?["rho"] as? String } == ["0.01", "0.02", "0.01", "0.01", "0.01"])
        }
    }

    @Test("PRIVACY_* and GROUP_RESULTS_LATENESS: documented defaults; no value turns the noise off")
    func settings() throws {
        func privacy(_ environment: [String: String]) throws -> PrivacySettings {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)).privacy
        }
        let defaults = try privacy([:])
        #expect(defaults.defaultCellLoss == 0.01 && defaults.companyBudget == 3 && defaults.companyPeriodDays == 30)
        #expect(defaults.personBudget == 2 && defaults.peerReserve == 0.5 && defaults.latenessHours == 24)
        let set = try privacy(["PRIVACY_CELL_RHO": "0.05", "PRIVACY_COMPANY_BUDGET": "10", "GROUP_RESULTS_LATENESS": "0"])
        #expect(set.defaultCellLoss == 0.05 && set.companyBudget == 10 && set.latenessHours == 0)
        for (name, wrong) in [
            ("PRIVACY_CELL_RHO", "0"), ("PRIVACY_CELL_RHO", "1"), ("PRIVACY_COMPANY_BUDGET", "0"), ("PRIVACY_PERSON_BUDGET", "0"),
            ("PRIVACY_PEER_RESERVE", "2"), ("PRIVACY_PEER_RESERVE", "0.001"), ("GROUP_RESULTS_LATENESS", "-1"),
        ] {
            #expect(throws: ConfigurationError.self, "\(name)=\(wrong)") { try privacy([name: wrong]) }
        }
    }
}

extension GroupPrivacyLedgerTests {
    /// The caps are read once when the ledger has no entry newer than that reading, and again under the lock
    /// when it has: here another release's debit (its people's loss and its ledger entry, as every debit
    /// writes them) commits after the cells were computed and before the ledger lock. Without the second
    /// reading the person it spent would be debited past her cap.
    @Test("a debit committed between the caps' reading and the ledger lock is seen: the caps are read again and its person is left out")
    func debitRacingTheEvaluation() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let ids = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try #require(UUID(uuidString: try await harness.accountID(try await harness.activeCompany())))
            let spender = try await harness.int("SELECT person_number FROM users WHERE account_id = '\(ids[0])'")
            // A group cap of 0.1 per person (0.6 less the peer reserve of 0.5), all of it open to this company.
            let privacy = {
                var settings = PrivacySettings()
                settings.personBudget = 0.6
                settings.peerReserve = 0.5
                settings.companyShare = 1
                return settings
            }()
            try await TestDatabase.withClient(harness.databaseURL) { client in
                var service = GroupRequestService(
                    client: client, minimumCohort: GroupFixtures.k, evaluations: EvaluationSlots(slots: 2, timeout: .seconds(30)),
                    privacy: privacy, noise: NoNoise())
                // Once, after the first evaluation's cells: another release spends 0.08 of her 0.1.
                let race = try RacingDebit(after: .cells, micro: 80000, person: spender, database: harness.databaseURL)
                service.stepTimer = race.timer
                let principal = Principal(accountID: company, role: .thirdParty, credential: .session(tokenHash: Data()))
                let creation = GroupRequestService.Creation(
                    types: [.heartRate], filters: [GroupRequest.Filter(type: .heartRate, min: 60, max: 80)],
                    demographics: .init(ageMin: nil, ageMax: nil, sex: nil), windowFrom: try #require(CalendarDate(iso: "2026-03-01")),
                    windowTo: try #require(CalendarDate(iso: "2026-03-02")), bucket: .day, purpose: "Ledger race", subscriptionDays: nil,
                    purposeCode: .healthcareResearch)
                let first = try await service.create(creation, by: principal, logger: TestDatabase.logger)
                #expect(race.happened)
                #expect(first.cohortSize == 6, "the seven women at 60–80, less the one the racing release spent")
                let cohort = try await harness.sql("SELECT unnest(cohort)::int8 FROM group_requests WHERE id = '\(first.id)'")
                #expect(try !cohort.map { try $0.decode(Int64.self) }.contains(Int64(spender)))
                #expect(try await harness.int("SELECT sum(loss_micro)::int8 FROM privacy_person_loss WHERE person_number = \(spender)") == 80000)
                // Read again once: the evaluation that found the ledger moved; the one after it found it still.
                #expect(race.capsReadAgain == 1)

                // Nothing debited since the caps were read: they are read once.
                _ = try await service.create(creation, by: principal, logger: TestDatabase.logger)
                #expect(race.capsReadAgain == 1)
            }
        }
    }

    /// A subscription's later release reads its members' caps once too, and again under the ledger lock only
    /// when a debit has been recorded since: here one commits while the release's cells are computed. Without
    /// the second reading, the person it spent would be debited past her cap.
    @Test("a debit committed while a subscription's release is computed is seen: the release is dropped, then made without her")
    func debitRacingASubscriptionRelease() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let ids = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try #require(UUID(uuidString: try await harness.accountID(try await harness.activeCompany())))
            let spender = try await harness.int("SELECT person_number FROM users WHERE account_id = '\(ids[0])'")
            // A group cap of 0.1 per person, all of it open to this company; 0.01 a cell.
            let privacy = {
                var settings = PrivacySettings()
                (settings.personBudget, settings.peerReserve, settings.companyShare) = (0.6, 0.5, 1)
                return settings
            }()
            let day: @Sendable (String) -> WallClock = { WallClock.fixed(Timestamp.parse($0)!) }
            try await TestDatabase.withClient(harness.databaseURL) { client in
                func service(at clock: WallClock) -> GroupRequestService {
                    GroupRequestService(
                        client: client, minimumCohort: GroupFixtures.k, evaluations: EvaluationSlots(slots: 2, timeout: .seconds(30)),
                        privacy: privacy, noise: NoNoise(), clock: clock)
                }
                let principal = Principal(accountID: company, role: .thirdParty, credential: .session(tokenHash: Data()))
                let creation = GroupRequestService.Creation(
                    types: [.heartRate], filters: [GroupRequest.Filter(type: .heartRate, min: 60, max: 80)],
                    demographics: .init(ageMin: nil, ageMax: nil, sex: nil), windowFrom: try #require(CalendarDate(iso: "2026-03-01")),
                    windowTo: try #require(CalendarDate(iso: "2026-03-02")), bucket: .day, purpose: "Subscription race",
                    subscriptionDays: 30, purposeCode: .healthcareResearch)
                // Created when only 1 March has closed: the cohort and that day, 0.02 from each of the seven women.
                let created = try await service(at: day("2026-03-03T12:00:00Z")).create(creation, by: principal, logger: TestDatabase.logger)
                #expect(created.cohortSize == 7)
                let loss = "SELECT sum(loss_micro)::int8 FROM privacy_person_loss WHERE person_number = \(spender)"
                #expect(try await harness.int(loss) == 20000)

                // Two days later 2 and 3 March have closed: 0.02 more. Another release spends 0.07 of hers meanwhile.
                var later = service(at: day("2026-03-05T12:00:00Z"))
                let race = try RacingDebit(after: .cellsType, micro: 70000, person: spender, database: harness.databaseURL)
                later.stepTimer = race.timer
                let request = try #require(
                    try await client.withConnection {
                        try await GroupRequestStore.request(id: created.id, sender: nil, on: $0, logger: TestDatabase.logger)
                    })
                // Her 0.09 and the release's 0.02 would pass her cap of 0.1: the release is dropped.
                #expect(try await later.releaseClosedBuckets(of: request, logger: TestDatabase.logger) == false)
                #expect(race.happened)
                #expect(race.capsReadAgain == 1)
                #expect(try await harness.int(loss) == 90000)
                // The next look releases the two days to the six who can still afford them, reading the caps once.
                #expect(try await later.releaseClosedBuckets(of: request, logger: TestDatabase.logger) == true)
                #expect(race.capsReadAgain == 1)
                #expect(try await harness.int(loss) == 90000)
                let others = "SELECT max(loss_micro)::int8 FROM privacy_person_loss WHERE person_number <> \(spender)"
                #expect(try await harness.int(others) == 40000)
            }
        }
    }
}

/// Another release's debit, committed from a connection of its own the first time an evaluation's `step` ends:
/// the person's loss and its ledger entry, as every debit writes them. Counts the caps' second readings too.
final class RacingDebit: Sendable {
    private let raced = Mutex(false)
    private let readAgain = Mutex(0)
    private let step: EvaluationStep
    private let micro: Int
    private let person: Int
    private let database: DatabaseURL
    private let admin: DatabaseURL

    init(after step: EvaluationStep, micro: Int, person: Int, database: DatabaseURL) throws {
        (self.step, self.micro, self.person, self.database) = (step, micro, person, database)
        admin = try TestDatabase.adminURL
    }

    var happened: Bool { raced.withLock { $0 } }
    var capsReadAgain: Int { readAgain.withLock { $0 } }

    var timer: EvaluationStepTimer {
        EvaluationStepTimer { [self] step, _ in
            if step == .capsAgain { readAgain.withLock { $0 += 1 } }
            guard step == self.step,
                raced.withLock({ done in
                    defer { done = true }
                    return !done
                })
            else { return }
            DatabaseReadsTests.psql(
                admin, database: database.database,
                """
                BEGIN;
                INSERT INTO privacy_person_loss VALUES (\(person), date_trunc('month', now() AT TIME ZONE 'UTC')::date, \(micro))
                ON CONFLICT (person_number, month) DO UPDATE SET loss_micro = privacy_person_loss.loss_micro + excluded.loss_micro;
                INSERT INTO privacy_ledger (company_id, request_id, kind, cells, loss_micro) VALUES (NULL, NULL, 'peer_statistics', 1, \(micro));
                COMMIT;
                """)
        }
    }
}
