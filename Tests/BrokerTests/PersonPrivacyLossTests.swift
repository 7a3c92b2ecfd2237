import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// A person's own privacy loss (issue 32, item 4): `GET /v1/me/privacy` and the console's *Privacy* page
/// show what group requests took from the person's yearly cap, by month and by request, and the peer
/// reserve; only the person can read it, and its shape and size are the same for everyone, whatever
/// anyone else's loss. Figures are exact (`NoNoise`): the ledger does not depend on the noise.
@Suite("Person privacy loss", .serialized)
struct PersonPrivacyLossTests {
    /// Heart rate 60–80 over March 1–2: two cells and the size, ρ 0.03 for each member.
    static let twoCells = GroupPrivacyLedgerTests.twoCells
    /// The same over March 1: ρ 0.02.
    static let oneCell = GroupPrivacyLedgerTests.oneCell
    /// Heart rate 74–76: Anna and one other woman, fewer than k: refused, and only the size is paid (ρ 0.01).
    static let tooFew =
        #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":74,"max":76}],"window":{"from":"2026-03-01","to":"2026-03-01"},"bucket":"day","purposeCode":"HRESCH","purpose":"Few"}"#

    /// Anna (a woman at 75, in the 60–80 requests), Bruno (a man at 90, in none) and Carla (no data), each
    /// signed in, among `GroupFixtures.standard`.
    struct People {
        var anna, bruno, carla: String
        var annaEmail: String
        var annaID: UUID
    }

    static func people(_ harness: TestHarness) async throws -> People {
        _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
        var anna = TestHarness.Person()
        anna.fiscalCode = TestHarness.uniqueFiscalCode()
        var bruno = TestHarness.Person(birthDate: "1980-05-01", sex: "M")
        bruno.fiscalCode = TestHarness.uniqueFiscalCode(birthDate: "1980-05-01", sex: "M")
        var carla = TestHarness.Person()
        carla.fiscalCode = TestHarness.uniqueFiscalCode()
        let annaToken = try await harness.activeUser(anna)
        let brunoToken = try await harness.activeUser(bruno)
        let carlaToken = try await harness.activeUser(carla)
        let annaID = try #require(UUID(uuidString: try await harness.accountID(annaToken)))
        let brunoID = try #require(UUID(uuidString: try await harness.accountID(brunoToken)))
        try await TestDatabase.withClient(harness.databaseURL) { client in
            _ = try await client.ingest(
                [1, 2].map { Sample(type: .heartRate, value: 75, at: GroupFixtures.date(day: $0, hour: 8)) }, for: annaID)
            _ = try await client.ingest(
                [1, 2].map { Sample(type: .heartRate, value: 90, at: GroupFixtures.date(day: $0, hour: 8)) }, for: brunoID)
        }
        return People(anna: annaToken, bruno: brunoToken, carla: carlaToken, annaEmail: anna.email, annaID: annaID)
    }

    static func number(_ value: Any?) -> Double { GroupFixtures.number(value) ?? .nan }

    /// The caller's answer, parsed, and its exact bytes.
    static func privacy(_ harness: TestHarness, _ token: String) async throws -> (object: [String: Any], body: String) {
        let response = try await harness.request(.get, "/v1/me/privacy", token: token)
        try #require(response.status == .ok, "GET /v1/me/privacy answered \(response.status)")
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
        return (try harness.object(response), String(buffer: response.body))
    }

    /// The answer's shape: every number 0, every string "", every array's items kept (their count is shape).
    static func skeleton(_ value: Any) -> Any {
        switch value {
        case let object as [String: Any]: object.mapValues(skeleton)
        case let array as [Any]: array.map(skeleton)
        case is String: ""
        case is NSNumber: 0
        default: value
        }
    }

    static func canonical(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }

    /// This month and the eleven before it, oldest first, as the API writes them.
    static var twelveMonths: [String] {
        let today = CalendarDate.today
        return (0..<12).reversed().map { back in
            let index = today.year * 12 + today.month - 1 - back
            return String(format: "%04d-%02d", index / 12, index % 12 + 1)
        }
    }

    static func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-9 }

    @Test("after group requests include a person: each request's ρ and share, the month's, the total, and the access log's requests")
    func lossAfterRequests() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let people = try await Self.people(harness)
            var cardio = TestHarness.Company()
            cardio.vatNumber = TestHarness.uniqueVATNumber()
            var heart = TestHarness.Company()
            heart.vatNumber = TestHarness.uniqueVATNumber()
            heart.companyName = "Heart Studies S.r.l."
            let first = try await harness.activeCompany(cardio)
            let second = try await harness.activeCompany(heart)
            let a = try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: first))
            let b = try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.oneCell, token: second))
            let c = try harness.object(try await harness.request(.post, "/v1/group-requests", json: Self.tooFew, token: second))
            #expect(a["status"] as? String == "accepted" && b["status"] as? String == "accepted")
            #expect(c["status"] as? String == "refused")

            let (loss, _) = try await Self.privacy(harness, people.anna)
            #expect(Self.number(loss["cap"]) == 2 && Self.number(loss["groupCap"]) == 1.5)
            #expect(Self.close(Self.number(loss["groupSpent"]), 0.06))
            #expect(Self.close(Self.number(loss["groupSpentShare"]), 0.06 / 1.5))
            // No peer day published yet: the group requests are all that is spent.
            #expect(Self.close(Self.number(loss["spent"]), 0.06))
            #expect(Self.close(Self.number(loss["spentShare"]), 0.03))
            #expect(loss["summary"] as? String == "About 3 % of this year's limit is spent.")
            #expect(Self.close(Self.number(loss["epsilon"]), PrivacyLoss(rho: 0.06).epsilon(delta: 1e-7)))
            #expect(Self.number(loss["delta"]) == 1e-7)

            let months = try #require(loss["months"] as? [[String: Any]])
            #expect(months.map { $0["month"] as? String } == Self.twelveMonths)
            #expect(Self.close(Self.number(months.last?["rho"]), 0.06))
            #expect(Self.close(Self.number(months.last?["share"]), 0.03))
            #expect(months.dropLast().allSatisfy { Self.number($0["rho"]) == 0 && Self.number($0["share"]) == 0 })
            #expect(loss["countsFrom"] as? String == Self.twelveMonths[0] + "-01")

            let requests = try #require(loss["requests"] as? [[String: Any]])
            let byID = Dictionary(uniqueKeysWithValues: requests.map { ($0["requestId"] as? String ?? "", $0) })
            #expect(requests.count == 3)
            let expected: [(Any?, String, String, Double)] = [
                (a["id"], "Cardio Research S.p.A.", "results", 0.03), (b["id"], "Heart Studies S.r.l.", "results", 0.02),
                (c["id"], "Heart Studies S.r.l.", "cohortSize", 0.01),
            ]
            for (id, company, contribution, rho) in expected {
                let line = try #require(byID[id as? String ?? "?"], "request \(id ?? "?") missing")
                #expect(line["companyName"] as? String == company)
                #expect(line["contribution"] as? String == contribution)
                #expect(Self.close(Self.number(line["rho"]), rho))
                #expect(Self.close(Self.number(line["share"]), rho / 2))
            }
            #expect(Self.number(loss["unattributedRho"]) == 0)

            // The requests whose results took something are exactly the group requests the access log lists.
            let log = try harness.object(try await harness.request(.get, "/v1/me/access-log", token: people.anna))
            let logged = Set(
                (log["items"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "group" }.compactMap { $0["requestId"] as? String })
            #expect(logged == Set(requests.filter { $0["contribution"] as? String == "results" }.compactMap { $0["requestId"] as? String }))

            // Bruno was in none of them.
            let (bruno, _) = try await Self.privacy(harness, people.bruno)
            #expect((bruno["requests"] as? [Any])?.isEmpty == true)
            #expect(Self.number(bruno["groupSpent"]) == 0)
            #expect(bruno["summary"] as? String == "Nothing of this year's limit is spent.")
        }
    }

    @Test("twelve calendar months count: a debit of eleven months ago is shown, one of twelve is not; the peer reserve from the ledger")
    func window() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let people = try await Self.people(harness)
            let company = try await harness.activeCompany()
            let companyID = try await harness.accountID(company)
            let number = try await harness.int("SELECT person_number::int8 FROM users WHERE account_id = '\(people.annaID)'")
            let (old, older) = (UUID(), UUID())
            for (request, back, micro) in [(old, 11, 40_000), (older, 12, 70_000)] {
                let month = "(date_trunc('month', now() AT TIME ZONE 'UTC') - interval '\(back) months')::date"
                _ = try await harness.sql(
                    "INSERT INTO privacy_person_loss (person_number, month, loss_micro) VALUES (\(number), \(month), \(micro))")
                _ = try await harness.sql(
                    """
                    INSERT INTO privacy_person_request_loss (person_number, month, company_id, request_id, loss_micro)
                    VALUES (\(number), \(month), '\(companyID)', '\(request)', \(micro))
                    """)
            }
            // A debit from before the server kept them by request: counted, but in no request's line.
            _ = try await harness.sql(
                """
                INSERT INTO privacy_person_loss (person_number, month, loss_micro)
                VALUES (\(number), (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '2 months')::date, 5000)
                """)
            // Two peer days published this year, one thirteen months ago.
            _ = try await harness.sql(
                """
                INSERT INTO privacy_ledger (at, kind, cells, loss_micro) VALUES
                    (now(), 'peer_statistics', 442, 1100), (now() - interval '1 day', 'peer_statistics', 442, 1100),
                    (now() - interval '13 months', 'peer_statistics', 442, 1100)
                """)
            let (loss, _) = try await Self.privacy(harness, people.anna)
            let months = try #require(loss["months"] as? [[String: Any]])
            #expect(months.count == 12)
            #expect(Self.close(Self.number(months[0]["rho"]), 0.04))
            #expect(Self.close(Self.number(months[9]["rho"]), 0.005))
            #expect(Self.close(Self.number(loss["groupSpent"]), 0.045))
            let requests = try #require(loss["requests"] as? [[String: Any]])
            #expect(requests.map { $0["requestId"] as? String } == [old.uuidString.lowercased()])
            #expect(requests.first?["companyName"] as? String == "Cardio Research S.p.A.")
            #expect(requests.first?["contribution"] as? String == "cohortSize")
            #expect(Self.close(Self.number(loss["unattributedRho"]), 0.005))
            let reserve = try #require(loss["peerReserve"] as? [String: Any])
            #expect(Self.number(reserve["rho"]) == 0.5 && Self.number(reserve["share"]) == 0.25)
            #expect(Self.close(Self.number(reserve["spentAtMost"]), 0.0022))
            #expect(Self.close(Self.number(reserve["spentAtMostShare"]), 0.0022 / 0.5))
            #expect(Self.close(Self.number(loss["spent"]), 0.0472))
            // Carla was in nothing, but the peer days count for her as for everyone.
            let (carla, _) = try await Self.privacy(harness, people.carla)
            #expect(Self.close(Self.number(carla["spent"]), 0.0022))
            #expect(carla["summary"] as? String == "Less than 1 % of this year's limit is spent.")
            // The oldest month stops counting when the next month begins.
            let ends = try #require(TestHarness.date(loss["oldestMonthEndsAt"]))
            let today = CalendarDate.today
            let next = CalendarDate(year: today.month == 12 ? today.year + 1 : today.year, month: today.month % 12 + 1, day: 1)!
            #expect(ends == Date(timeIntervalSince1970: TimeInterval(next.dayNumber) * 86_400))
        }
    }

    @Test("the same shape and size for everyone, whatever anyone else's loss")
    func sameShapeForEveryone() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let people = try await Self.people(harness)
            let (carlaBefore, carlaBodyBefore) = try await Self.privacy(harness, people.carla)
            let (_, brunoBodyBefore) = try await Self.privacy(harness, people.bruno)
            // Two people in no request read exactly the same bytes.
            #expect(carlaBodyBefore == brunoBodyBefore)
            #expect((carlaBefore["months"] as? [Any])?.count == 12)

            let company = try await harness.activeCompany()
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company).status == .created)
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.tooFew, token: company).status == .created)

            // Anna's loss changed; Carla's and Bruno's answers did not, to the byte.
            let (_, carlaBodyAfter) = try await Self.privacy(harness, people.carla)
            let (_, brunoBodyAfter) = try await Self.privacy(harness, people.bruno)
            #expect(carlaBodyAfter == carlaBodyBefore)
            #expect(brunoBodyAfter == brunoBodyBefore)

            // Anna's has the same shape: the same members, twelve months, and lines of requests of one shape.
            let (anna, _) = try await Self.privacy(harness, people.anna)
            var withoutRequests = anna
            let requests = try #require(anna["requests"] as? [[String: Any]])
            #expect(requests.count == 2)
            #expect(Set(requests.map { try! Self.canonical(Self.skeleton($0)) }).count == 1)
            withoutRequests["requests"] = [Any]()
            #expect(try Self.canonical(Self.skeleton(withoutRequests)) == (try Self.canonical(Self.skeleton(carlaBefore))))
        }
    }

    @Test("only the person reads it: a company, an auditor and no one get problems, and no one else can be named")
    func onlyThePerson() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let people = try await Self.people(harness)
            var cardio = TestHarness.Company()
            cardio.vatNumber = TestHarness.uniqueVATNumber()
            let company = try await harness.activeCompany(cardio)
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company).status == .created)
            let auditor = try await harness.activeAuditor()
            for (token, status) in [(company, HTTPResponse.Status.forbidden), (auditor, .forbidden), (nil, .unauthorized)] {
                let response = try await harness.request(.get, "/v1/me/privacy", token: token)
                #expect(response.status == status)
                #expect(response.headers[.contentType]?.hasPrefix("application/problem+json") == true)
                let body = String(buffer: response.body)
                #expect(!body.contains("0.03") && !body.contains("months"), "a refusal carried someone's loss: \(body)")
            }
            // Naming Anna gets Carla her own answer, never Anna's.
            let (carla, carlaBody) = try await Self.privacy(harness, people.carla)
            #expect(Self.number(carla["groupSpent"]) == 0)
            for query in ["?person=\(people.annaID)", "?accountId=\(people.annaID)", "?userId=\(people.annaID)"] {
                let named = try await harness.request(.get, "/v1/me/privacy" + query, token: people.carla)
                #expect(named.status == .ok && String(buffer: named.body) == carlaBody, "\(query)")
            }
            for path in ["/v1/users/\(people.annaID)/privacy", "/v1/me/privacy/\(people.annaID)"] {
                let other = try await harness.request(.get, path, token: people.carla)
                #expect(other.status == .notFound, "\(path): \(other.status)")
            }
            // The console page is a person's too.
            let browser = ConsoleBrowser(harness)
            _ = try await browser.logIn(cardio.email, cardio.password)
            let page = try await browser.get("/privacy")
            #expect(page.status != .ok)
            #expect(!browser.lastPage.contains("privacy-months"))
        }
    }

    @Test("the console page says it in the person's language, with the months, the requests and the reserve", arguments: Language.allCases)
    func consolePage(language: Language) async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let people = try await Self.people(harness)
            let company = try await harness.activeCompany()
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.twoCells, token: company).status == .created)
            #expect(try await harness.request(.post, "/v1/group-requests", json: Self.tooFew, token: company).status == .created)
            let browser = ConsoleBrowser(harness)
            _ = try await browser.logIn(people.annaEmail, TestHarness.Person().password)
            try await browser.get("/account")
            #expect(try await browser.post("/account/language", [("language", language.rawValue)]).status == .seeOther)
            let page = try await browser.get("/privacy")
            #expect(page.status == .ok)
            let html = browser.lastPage
            #expect(!html.contains("⟦"), "a key is missing")
            let catalog = try ConsoleTranslationTests.catalog().strings(for: language, fallback: false)
            // As the page escapes them.
            func text(_ key: String, _ values: [String: String] = [:]) -> String {
                catalog.format(key, values).replacingOccurrences(of: "'", with: "&#39;")
            }
            // ρ 0.03 and 0.01 of 2: 2 % in all, 1.5 % and 0.5 % each.
            #expect(html.contains(text("privacyLoss.summary.about", ["percent": "2"])), "\(html)")
            #expect(html.contains(text("privacyLoss.contribution.cohortSize")))
            #expect(html.contains(text("privacyLoss.howToRead.title")))
            #expect(html.contains("Cardio Research S.p.A."))
            #expect(html.contains(language == .it ? "0,03" : "0.03"))
            #expect(html.contains(language == .it ? "1,5 %" : "1.5 %") && html.contains(language == .it ? "0,5 %" : "0.5 %"))
            #expect(html.components(separatedBy: "<meter").count - 1 == 13)
            #expect(html.contains(#"href="/privacy""#))
            #expect(html.contains(#"id="privacy-reserve""#))
        }
    }
}
