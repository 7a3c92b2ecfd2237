import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 17, items 5, 6, 7 and 10, as an attacker holding a company's credentials would try them: single
/// requests as a registration oracle, a block that leaves subscriptions running, download cursors that
/// move with data the request does not release, and a company's erasure that wipes people's history.
@Suite("Request privacy", .serialized)
struct RequestPrivacyTests {
    // MARK: Item 5: single requests are no registration oracle

    /// `POST /v1/single-requests` naming the subject by fiscal code.
    static func send(_ harness: TestHarness, _ token: String, fiscalCode: String, subscriptionDays: Int? = nil) async throws -> TestResponse {
        let subscription = subscriptionDays.map { #","subscription":{"days":\#($0)}"# } ?? ""
        return try await harness.request(
            .post, "/v1/single-requests",
            json:
                #"{"subject":{"fiscalCode":"\#(fiscalCode)"},"types":["heart_rate"],"purposeCode":"HRESCH","purpose":"Cardiology study"\#(subscription)}"#,
            token: token)
    }

    /// A request as the company sees it, without what differs between any two requests (id, times, the
    /// subject as typed): what is left must not tell a registered person from nobody. `expiresAt` follows
    /// from the creation time (RequestExpiryAndPurposeTests compares requests given the same one).
    static func shape(_ object: [String: Any]) throws -> String {
        var object = object
        for key in ["id", "createdAt", "subject", "expiresAt"] { object.removeValue(forKey: key) }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Header names and values, less those that differ between any two answers.
    static func headers(_ response: TestResponse) -> [String] {
        response.headers.filter { ![.date, .location, .contentLength].contains($0.name) }
            .map { "\($0.name.canonicalName)=\($0.value)" }.sorted()
    }

    @Test("a request to an unknown or erased fiscal code answers and reads like one to a registered person")
    func noRegistrationOracle() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 's')")
            var erased = TestHarness.Person()
            erased.fiscalCode = TestHarness.uniqueFiscalCode()
            let erasedToken = try await harness.activeUser(erased)
            #expect(
                try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(erased.password)"}"#, token: erasedToken).status == .noContent)
            let nobody = TestHarness.uniqueFiscalCode()

            let known = try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode, subscriptionDays: 30)
            let unknown = try await Self.send(harness, parties.company, fiscalCode: nobody, subscriptionDays: 30)
            let gone = try await Self.send(harness, parties.company, fiscalCode: erased.fiscalCode, subscriptionDays: 30)
            #expect(known.status == .created)
            #expect(unknown.status == known.status, "\(harness.text(unknown))")
            #expect(gone.status == known.status, "\(harness.text(gone))")
            let answers = try [known, unknown, gone].map { try harness.object($0) }
            #expect(try Self.shape(answers[1]) == Self.shape(answers[0]))
            #expect(try Self.shape(answers[2]) == Self.shape(answers[0]))
            #expect(Self.headers(unknown) == Self.headers(known))
            #expect(Self.headers(gone) == Self.headers(known))

            // What the company reads later does not differ either: the request, the list, its webhooks.
            let ids = answers.map { $0["id"] as? String ?? "" }
            var reads: [String] = []
            for id in ids {
                reads.append(try Self.shape(try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.company))))
            }
            #expect(Set(reads).count == 1)
            let list = try harness.object(try await harness.request(.get, "/v1/single-requests?status=pending", token: parties.company))
            let listed = (list["items"] as? [[String: Any]] ?? [])
            #expect(Set(listed.compactMap { $0["id"] as? String }) == Set(ids))
            #expect(Set(try listed.map(Self.shape)).count == 1)
            #expect(try await harness.int("SELECT count(*) FROM webhook_events WHERE third_party_id = '\(parties.companyID)'") == 0)
            // A second request to the same subject is refused alike.
            let again = try await [parties.personFiscalCode, nobody, erased.fiscalCode].asyncMap {
                try await Self.send(harness, parties.company, fiscalCode: $0).status
            }
            #expect(again == [.conflict, .conflict, .conflict])

            // Only the registered person sees (and can accept) a request; then the company learns of them.
            let inbox = try harness.object(try await harness.request(.get, "/v1/single-requests", token: parties.person))
            #expect((inbox["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[0]])
            #expect(try await harness.request(.post, "/v1/single-requests/\(ids[0])/accept", token: parties.person).status == .ok)

            // A person who registers later with the fiscal code a request was sent to receives it.
            var later = TestHarness.Person()
            later.fiscalCode = nobody
            let laterToken = try await harness.activeUser(later)
            let laterInbox = try harness.object(try await harness.request(.get, "/v1/single-requests", token: laterToken))
            #expect((laterInbox["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[1]])
            #expect(try await harness.request(.post, "/v1/single-requests/\(ids[1])/accept", token: laterToken).status == .ok)
        }
    }

    @Test("a refusal (the person's, a block's, an erasure's) reads to the sender like a request to nobody: pending, then expired")
    func refusalIsNoOracle() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 's')")
            // Three people who will refuse (by refusing, by blocking, by erasing), and three fiscal codes of nobody.
            var refusers: [(token: String, person: TestHarness.Person)] = []
            for _ in 0..<3 {
                var person = TestHarness.Person()
                person.fiscalCode = TestHarness.uniqueFiscalCode()
                refusers.append((try await harness.activeUser(person), person))
            }
            let nobodies = (0..<3).map { _ in TestHarness.uniqueFiscalCode() }
            func send(_ fiscalCode: String) async throws -> String {
                let sent = try await Self.send(harness, parties.company, fiscalCode: fiscalCode, subscriptionDays: 30)
                try #require(sent.status == .created)
                return try #require(try harness.object(sent)["id"] as? String)
            }
            var refused: [String] = []
            var unanswered: [String] = []
            for index in 0..<3 {
                refused.append(try await send(refusers[index].person.fiscalCode))
                unanswered.append(try await send(nobodies[index]))
            }
            #expect(try await harness.request(.post, "/v1/single-requests/\(refused[0])/refuse", token: refusers[0].token).status == .ok)
            #expect(try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: refusers[1].token).status == .ok)
            let erasure = try await harness.request(
                .delete, "/v1/me", json: #"{"password":"\#(refusers[2].person.password)"}"#, token: refusers[2].token)
            #expect(erasure.status == .noContent)

            // The sender reads each refused request as it reads one to nobody: pending, undecided.
            func read(_ id: String) async throws -> [String: Any] {
                try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.company))
            }
            let nobodyShape = try Self.shape(try await read(unanswered[0]))
            #expect(nobodyShape.contains(#""status":"pending""#))
            for id in refused[0...1] { #expect(try Self.shape(try await read(id)) == nobodyShape) }
            #expect(try Self.shape(try await read(refused[2])) == nobodyShape)
            // The erased person's request keeps the subject as the company typed it, as one to nobody does.
            func subject(_ id: String) async throws -> [String: String] { try await read(id)["subject"] as? [String: String] ?? [:] }
            #expect(try await subject(refused[2]) == ["fiscalCode": refusers[2].person.fiscalCode])
            #expect(try await subject(unanswered[2]) == ["fiscalCode": nobodies[2]])
            let listed = try harness.object(try await harness.request(.get, "/v1/single-requests?status=pending", token: parties.company))
            #expect(Set((listed["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }) == Set(refused + unanswered))
            let refusedList = try harness.object(try await harness.request(.get, "/v1/single-requests?status=refused", token: parties.company))
            #expect((refusedList["items"] as? [[String: Any]])?.isEmpty == true)
            // No webhook, no download, and the same 409 for a second request to the subject.
            #expect(try await harness.int("SELECT count(*) FROM webhook_events WHERE third_party_id = '\(parties.companyID)'") == 0)
            let downloads = try await (refused + unanswered).asyncMap {
                let answer = try await harness.request(.get, "/v1/single-requests/\($0)/data", token: parties.company)
                return "\(answer.status.code) \(try harness.object(answer)["type"] as? String ?? "")"
            }
            #expect(Set(downloads).count == 1, "\(downloads)")
            let endings = try await (refused + unanswered).asyncMap {
                let answer = try await harness.request(.delete, "/v1/single-requests/\($0)/subscription", token: parties.company)
                return "\(answer.status.code) \(try harness.object(answer)["detail"] as? String ?? "")"
            }
            #expect(Set(endings).count == 1, "\(endings)")
            let again = try await [refusers[0].person.fiscalCode, refusers[2].person.fiscalCode, nobodies[0]].asyncMap {
                try await Self.send(harness, parties.company, fiscalCode: $0).status
            }
            #expect(again == [.conflict, .conflict, .conflict])

            // The person still sees their refusal; the audit log has it.
            let own = try harness.object(try await harness.request(.get, "/v1/single-requests/\(refused[0])", token: refusers[0].token))
            #expect(own["status"] as? String == "refused")
            #expect(
                try await harness.int("SELECT count(*) FROM audit_events WHERE request_id = '\(refused[0])' AND action = 'single_request.refused'")
                    == 1)

            // Cancelled by the sender: cancelled, alike; the person's refusal stays theirs.
            let cancels = try await [refused[0], unanswered[0]].asyncMap {
                let answer = try await harness.request(.post, "/v1/single-requests/\($0)/cancel", token: parties.company)
                return "\(answer.status.code) \(try harness.object(answer)["status"] as? String ?? "")"
            }
            #expect(cancels == ["200 cancelled", "200 cancelled"])
            func undated(_ object: [String: Any]) -> [String: Any] { object.filter { $0.key != "decidedAt" } }
            #expect(try Self.shape(undated(try await read(refused[0]))) == Self.shape(undated(try await read(unanswered[0]))))
            #expect(try await read(refused[0])["decidedAt"] != nil)
            let twice = try await harness.request(.post, "/v1/single-requests/\(refused[0])/cancel", token: parties.company)
            #expect(twice.status == .conflict)
            let ownAfter = try harness.object(try await harness.request(.get, "/v1/single-requests/\(refused[0])", token: refusers[0].token))
            #expect(ownAfter["status"] as? String == "refused")
            #expect(try await Self.send(harness, parties.company, fiscalCode: refusers[0].person.fiscalCode).status == .created)

            // Once their time has run out, both read expired.
            _ = try await harness.sql(
                "UPDATE single_requests SET expires_at = now() - interval '1 second' WHERE id IN ('\(refused[1])', '\(unanswered[1])')")
            let expired = try await read(refused[1])
            #expect(expired["status"] as? String == "expired")
            #expect(try Self.shape(expired) == Self.shape(try await read(unanswered[1])))
        }
    }

    @Test("a pending request expires: the person can no longer accept it and the sender may ask again")
    func pendingRequestsExpire() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let nobody = TestHarness.uniqueFiscalCode()
            let toPerson = try #require(
                try harness.object(try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode))["id"] as? String)
            let toNobody = try #require(try harness.object(try await Self.send(harness, parties.company, fiscalCode: nobody))["id"] as? String)
            let expiry = try await harness.sql("SELECT (expires_at - created_at)::text FROM single_requests WHERE id = '\(toPerson)'")
            #expect(try expiry.first?.decode(String.self) == "30 days")
            try await harness.sql("UPDATE single_requests SET expires_at = now() - interval '1 second'")
            for id in [toPerson, toNobody] {
                let read = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.company))
                #expect(read["status"] as? String == "expired")
            }
            let accept = try await harness.request(.post, "/v1/single-requests/\(toPerson)/accept", token: parties.person)
            #expect(accept.status == .conflict)
            #expect(try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode).status == .created)
            #expect(try await Self.send(harness, parties.company, fiscalCode: nobody).status == .created)
        }
    }

    @Test("PENDING_REQUEST_EXPIRY_DAYS: 30 by default, 1–90, and the server gives new requests that long")
    func pendingExpirySetting() async throws {
        func days(_ environment: [String: String]) throws -> Int {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)).pendingRequestExpiryDays
        }
        #expect(try days([:]) == 30)
        #expect(try days(["PENDING_REQUEST_EXPIRY_DAYS": "7"]) == 7)
        for wrong in ["0", "-1", "91", "366", "ten"] {
            #expect(throws: ConfigurationError.self) { try days(["PENDING_REQUEST_EXPIRY_DAYS": wrong]) }
        }
        try await TestHarness.run(configure: { $0.pendingRequestExpiryDays = 2 }) { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties)
            let expiry = try await harness.sql("SELECT (expires_at - created_at)::text FROM single_requests WHERE id = '\(id)'")
            #expect(try expiry.first?.decode(String.self) == "2 days")
        }
    }

    // MARK: Item 6: a block ends subscriptions and keeps the person out of the company's cohorts

    @Test("blocking a company ends its live subscriptions at once, with the webhook, and releases nothing more")
    func blockEndsSubscriptions() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 's')")
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            let id = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            let first = try await harness.download(id, token: parties.company)
            #expect(first.items.count == 1)

            #expect(try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: parties.person).status == .ok)
            let read = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.company))
            let subscription = read["subscription"] as? [String: Any]
            #expect(subscription?["status"] as? String == "ended")
            #expect(subscription?["endedBy"] as? String == "user")
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM webhook_events WHERE request_id = '\(id)' AND type = 'subscription.ended'") == 1)
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM audit_events WHERE request_id = '\(id)' AND action = 'subscription.ended' AND details->>'reason' = 'blocked'"
                ) == 1)

            try await harness.uploadHeartRates([TestHarness.time(minutes: 5)], token: parties.person)
            let after = try await harness.download(id, cursor: first.nextCursor, token: parties.company)
            #expect(after.items.isEmpty)
            #expect(after.nextCursor == first.nextCursor)
        }
    }

    @Test("a person who blocked a company is not in its group cohorts; other companies still count them")
    func blockExcludesFromCohorts() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let members = (0..<GroupFixtures.k).map { _ in GroupFixtures.Member(heartRate: [1: [70], 2: [70]]) }
            let people = try await GroupFixtures.populate(harness, members)
            let blocked = try await harness.activeCompany()
            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let bystander = try await harness.activeCompany(other)
            let blockedID = try await harness.accountID(blocked)
            // As `PUT /v1/me/blocks/{id}` stores it (these people have no password to log in with).
            try await harness.sql("INSERT INTO blocks (user_id, third_party_id) VALUES ('\(people[0])', '\(blockedID)')")

            let body =
                #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":60,"max":80}],"demographics":{},"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"Study"}"#
            let refused = try harness.object(try await harness.request(.post, "/v1/group-requests", json: body, token: blocked))
            #expect(refused["status"] as? String == "refused")
            #expect(refused["refusalReason"] as? String == "cohort_below_threshold")
            let accepted = try harness.object(try await harness.request(.post, "/v1/group-requests", json: body, token: bystander))
            #expect(accepted["status"] as? String == "accepted")
            #expect(accepted["cohortSize"] as? Int == GroupFixtures.k)
        }
    }

    @Test("a member who blocks the company after a group subscription started is left out of its later releases")
    func blockExcludesFromGroupSubscriptionReleases() async throws {
        struct Day1: Sendable { var company: String, id: String, blocker: UUID }
        try await GroupFixtures.acrossADay(
            configure: GroupFixtures.refreshEverySecond, noise: NoNoise(),
            before: { harness in
                let ids = try await GroupFixtures.populate(harness, (0..<6).map { _ in GroupFixtures.Member() })
                for day in [3, 2] { try await GroupFixtures.upload(harness, ids, heartRate: 70, on: GroupFixtures.daysAgo(day), hour: 9) }
                let company = try await harness.activeCompany()
                let body =
                    #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":0,"max":300}],"demographics":{},"window":{"from":"\#(GroupFixtures.daysAgo(3))","to":"\#(GroupFixtures.daysAgo(2))"},"bucket":"day","purposeCode":"HRESCH","purpose":"Study","subscription":{"days":30}}"#
                let response = try await harness.request(.post, "/v1/group-requests", json: body, token: company)
                try #require(response.status == .created, "create answered \(response.status): \(harness.text(response))")
                let created = try harness.object(response)
                #expect(created["status"] as? String == "accepted")
                let id = try #require(created["id"] as? String)
                let companyID = try await harness.accountID(company)
                try await harness.sql("INSERT INTO blocks (user_id, third_party_id) VALUES ('\(ids[0])', '\(companyID)')")
                return Day1(company: company, id: id, blocker: ids[0])
            },
            after: { harness, day1 in
                // The background refresh releases the day that closed in between (a read releases nothing).
                #expect(await eventually { (try? await harness.int("SELECT count(*) FROM group_releases WHERE request_id = '\(day1.id)'")) == 2 })
                let read = try await harness.request(.get, "/v1/group-requests/\(day1.id)/results", token: day1.company)
                let cells = try #require(try harness.object(read)["items"] as? [[String: Any]])
                let newest = try #require(cells.first { $0["bucketStart"] as? String == GroupFixtures.daysAgo(2).description })
                // Six people matched; the one who blocked the company since is not counted (no noise here).
                #expect(newest["people"] as? Int == 5)
                let earlier = try #require(cells.first { $0["bucketStart"] as? String == GroupFixtures.daysAgo(3).description })
                #expect(earlier["people"] as? Int == 6)
            })
    }

    // MARK: Item 7: cursors count only what the request releases

    @Test("uploads the request does not release (other types, outside the window) move no cursor and no webhook")
    func cursorIgnoresUnreleasedUploads() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 's')")
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            let id = try await harness.acceptedRequestID(
                parties, subscriptionDays: 30, window: .init(from: "2026-03-01T00:00:00Z", to: "2026-03-31T00:00:00Z"))
            let first = try await harness.download(id, token: parties.company)
            #expect(first.items.count == 1)
            // Cursors are sealed, not arrival numbers (whose gaps would count the person's other uploads):
            // an arrival number, or another request's cursor, is refused.
            #expect(Int(first.nextCursor) == nil)
            let numeric = try await harness.request(.get, "/v1/single-requests/\(id)/data?cursor=1", token: parties.company)
            #expect(numeric.status == .unprocessableContent)
            let other = try await harness.acceptedRequestID(parties, types: ["heart_rate", "weight"])
            let otherCursor = try await harness.download(other, token: parties.company).nextCursor
            let moved = try await harness.request(.get, "/v1/single-requests/\(id)/data?cursor=\(otherCursor)", token: parties.company)
            #expect(moved.status == .unprocessableContent)

            let weight = try await harness.upload([("weight", 70.5, TestHarness.time(minutes: 1))], token: parties.person)
            #expect(weight.status == .ok)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0, day: "2026-04-02")], token: parties.person)
            let again = try await harness.download(id, cursor: first.nextCursor, token: parties.company)
            #expect(again.items.isEmpty)
            #expect(again.nextCursor == first.nextCursor)
            #expect(try await harness.download(id, token: parties.company).nextCursor == first.nextCursor)
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM webhook_events WHERE request_id = '\(id)' AND type = 'subscription.data_available'") == 0)

            // Data the request does release moves the cursor and is announced.
            try await harness.uploadHeartRates([TestHarness.time(minutes: 2)], token: parties.person)
            let announced = try await harness.queuedEvents(where: "request_id = '\(id)' AND type = 'subscription.data_available'")
            #expect(announced.map(\.cursor) == [first.nextCursor])
            let next = try await harness.download(id, cursor: first.nextCursor, token: parties.company)
            #expect(next.items.count == 1)
            #expect(next.nextCursor != first.nextCursor)
        }
    }

    // MARK: Item 10: erasing a company keeps people's history

    @Test("erasing a company keeps its requests in people's inboxes and exports, their access log and the audit trail")
    func companyErasureKeepsHistory() async throws {
        try await TestHarness.run { harness in
            var company = TestHarness.Company()
            company.vatNumber = TestHarness.uniqueVATNumber()
            var person = TestHarness.Person()
            person.fiscalCode = TestHarness.uniqueFiscalCode()
            let personToken = try await harness.activeUser(person)
            let companyToken = try await harness.activeCompany(company)
            let parties = RequestParties(
                company: companyToken, companyID: try await harness.accountID(companyToken), person: personToken,
                personID: try await harness.accountID(personToken), personEmail: person.email, personFiscalCode: person.fiscalCode)
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: personToken)
            let released = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            #expect(try await harness.download(released, token: companyToken).items.count == 1)
            let pending = try #require(try harness.object(try await Self.send(harness, companyToken, fiscalCode: person.fiscalCode))["id"] as? String)

            let erase = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(company.password)"}"#, token: companyToken)
            #expect(erase.status == .noContent)

            let inbox = try harness.object(try await harness.request(.get, "/v1/single-requests", token: personToken))
            let items = inbox["items"] as? [[String: Any]] ?? []
            #expect(Set(items.compactMap { $0["id"] as? String }) == [released, pending])
            for item in items {
                #expect((item["thirdParty"] as? [String: Any])?["companyName"] as? String == "Erased company")
            }
            let byID = Dictionary(uniqueKeysWithValues: items.map { ($0["id"] as? String ?? "", $0) })
            #expect(byID[pending]?["status"] as? String == "cancelled")
            #expect((byID[released]?["subscription"] as? [String: Any])?["status"] as? String == "ended")
            let log = try harness.object(try await harness.request(.get, "/v1/me/access-log", token: personToken))
            #expect((log["items"] as? [[String: Any]])?.compactMap { $0["requestId"] as? String } == [released])
            let export = try harness.object(try await harness.request(.get, "/v1/me/export", token: personToken))
            #expect(Set((export["requests"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }) == [released, pending])

            let auditor = try await harness.activeAuditor()
            let events = try harness.object(
                try await harness.request(
                    .get, "/v1/audit/events?action=single_request.data_released&limit=100", token: auditor))
            #expect((events["items"] as? [[String: Any]])?.compactMap { $0["requestId"] as? String } == [released])
            // The person can still read each request; nobody else can act on them.
            #expect(try await harness.request(.get, "/v1/single-requests/\(released)", token: personToken).status == .ok)
            #expect(try await harness.request(.post, "/v1/single-requests/\(pending)/accept", token: personToken).status == .conflict)
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
