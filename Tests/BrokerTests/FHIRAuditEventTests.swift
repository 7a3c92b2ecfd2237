import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The audit log as FHIR R4 `AuditEvent` NDJSON (`GET /v1/audit/events?format=ndjson`): one event a line, in
/// order, with what the JSON page shows and nothing more, the chain verifiable from the file alone, and the
/// download's role gate and budget. (scripts/fhir-check.py validates the lines against the R4 models.)
@Suite("FHIR AuditEvent NDJSON", .serialized)
struct FHIRAuditEventTests {
    /// A person with distinctive identity and values, who uploads, corrects, shares less, blocks and unblocks a
    /// company, and accepts a request whose data the company downloads: events of every family about them.
    struct World: Sendable {
        var parties: RequestParties
        var auditor: String
        var requestID: String
        var fullName: String
        /// A value the person uploaded that must never appear in the audit log.
        var rawValue: String
    }

    func world(_ harness: TestHarness) async throws -> World {
        var person = TestHarness.Person()
        person.fiscalCode = TestHarness.uniqueFiscalCode()
        person.fullName = "Zebedia Quattrocchi"
        person.email = "zebedia.quattrocchi.\(UUID().uuidString.prefix(6).lowercased())@example.com"
        var company = TestHarness.Company()
        company.vatNumber = TestHarness.uniqueVATNumber()
        let personToken = try await harness.activeUser(person)
        let companyToken = try await harness.activeCompany(company)
        let parties = RequestParties(
            company: companyToken, companyID: try await harness.accountID(companyToken), person: personToken,
            personID: try await harness.accountID(personToken), personEmail: person.email, personFiscalCode: person.fiscalCode)
        let uploaded = try await harness.upload(
            [
                (type: "heart_rate", value: 187.123, at: TestHarness.time(minutes: 0)),
                (type: "heart_rate", value: 61, at: TestHarness.time(minutes: 5)),
                (type: "heart_rate", value: 99.871, at: TestHarness.time(minutes: 10)),
            ], token: personToken)
        try #require(uploaded.status == .ok, "\(harness.text(uploaded))")
        let id = try await harness.acceptedRequestID(parties, window: .init(from: "2026-03-01T00:00:00Z", to: "2026-03-02T00:00:00Z"))
        _ = try await harness.download(id, token: companyToken)
        _ = try await SampleCorrectionTests.deleted(
            harness, personToken, ["type": "heart_rate", "from": "2026-03-01T08:09:00Z", "to": "2026-03-01T08:11:00Z"])
        #expect(
            try await harness.request(
                .put, "/v1/me/sharing", json: #"{"types":[{"type":"weight","shared":false}]}"#, token: personToken
            ).status == .ok)
        #expect(try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: personToken).status == .ok)
        #expect(try await harness.request(.delete, "/v1/me/blocks/\(parties.companyID)", token: personToken).status == .noContent)
        return World(
            parties: parties, auditor: try await harness.activeAuditor(), requestID: id, fullName: person.fullName, rawValue: "187.123")
    }

    /// The body's lines, each parsed as a JSON object.
    static func resources(_ response: TestResponse, _ harness: TestHarness, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> [[String: Any]]
    {
        let text = harness.text(response)
        #expect(text.isEmpty || text.hasSuffix("\n"), "the last line ends with a line feed", sourceLocation: sourceLocation)
        return try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)",
                sourceLocation: sourceLocation)
        }
    }

    /// Every event of the JSON audit log, oldest first.
    static func jsonEvents(_ harness: TestHarness, auditor: String, query: String = "") async throws -> [[String: Any]] {
        let response = try await harness.request(.get, "/v1/audit/events?limit=1000\(query)", token: auditor)
        try #require(response.status == .ok)
        return try harness.object(response)["items"] as? [[String: Any]] ?? []
    }

    static func detail(_ resource: [String: Any], _ type: String) -> String? {
        let entity = (resource["entity"] as? [[String: Any]])?.first
        return (entity?["detail"] as? [[String: Any]])?.first { $0["type"] as? String == type }?["valueString"] as? String
    }

    static func entity(_ resource: [String: Any], system: String) -> String? {
        for entity in resource["entity"] as? [[String: Any]] ?? [] {
            let identifier = (entity["what"] as? [String: Any])?["identifier"] as? [String: Any]
            if identifier?["system"] as? String == system { return identifier?["value"] as? String }
        }
        return nil
    }

    @Test("an auditor gets one AuditEvent a line, in order, saying what the JSON log says, and the chain recomputes from the file alone")
    func linesMatchTheJSONLog() async throws {
        try await TestHarness.run { harness in
            let world = try await world(harness)
            let response = try await harness.request(.get, "/v1/audit/events?format=ndjson", token: world.auditor)
            try #require(response.status == .ok, "\(harness.text(response))")
            #expect(response.headers[.contentType]?.hasPrefix("application/fhir+ndjson") == true)
            let lines = try Self.resources(response, harness)
            let events = try await Self.jsonEvents(harness, auditor: world.auditor)
            #expect(lines.count == (try await harness.int("SELECT count(*) FROM audit_events")))
            #expect(lines.count == events.count)
            #expect(lines.count >= 10)
            var walker = AuditChain.Walker()
            for (line, event) in zip(lines, events) {
                let seq = try #require(event["seq"] as? Int)
                #expect(line["resourceType"] as? String == "AuditEvent")
                #expect(line["id"] as? String == String(seq))
                #expect(Self.detail(line, "seq") == String(seq))
                #expect(Self.detail(line, "hash") == event["hash"] as? String)
                #expect(Self.detail(line, "prev_hash") == event["prevHash"] as? String)
                #expect(TestHarness.date(line["recorded"]) == TestHarness.date(event["at"]))
                #expect(line["outcome"] as? String == "0")
                #expect(["C", "R", "U", "D", "E"].contains(line["action"] as? String ?? ""))
                let subtype = (line["subtype"] as? [[String: Any]])?.first
                #expect(subtype?["system"] as? String == FHIRAuditEvent.actionSystem)
                #expect(subtype?["code"] as? String == event["action"] as? String)
                let actor = try #require(event["actor"] as? [String: Any])
                let agent = try #require((line["agent"] as? [[String: Any]])?.first)
                #expect(((agent["type"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String == actor["role"] as? String)
                let who = ((agent["who"] as? [String: Any])?["identifier"] as? [String: Any])?["value"] as? String
                #expect(who == actor["id"] as? String, "the actor exactly as the JSON log shows it")
                #expect(Self.entity(line, system: FHIRAuditEvent.pseudonymSystem) == event["subject"] as? String)
                let request = Self.entity(line, system: FHIRSystems.request) ?? Self.entity(line, system: FHIRAuditEvent.groupRequestSystem)
                #expect(request == event["requestId"] as? String)
                let observer = ((line["source"] as? [String: Any])?["observer"] as? [String: Any])?["identifier"] as? [String: Any]
                #expect(observer?["value"] as? String == "http://127.0.0.1:8080")

                // The chain, from the line alone.
                let link = AuditChain.Link(
                    seq: Int64(Self.detail(line, "seq").flatMap(Int64.init) ?? -1), at: Self.detail(line, "at") ?? "", actorID: who,
                    actorRole: ((agent["type"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String ?? "",
                    action: subtype?["code"] as? String ?? "",
                    requestID: request, subject: Self.entity(line, system: FHIRAuditEvent.pseudonymSystem),
                    details: Self.detail(line, "details") ?? "", prevHash: [UInt8](hexText: Self.detail(line, "prev_hash") ?? "") ?? [],
                    hash: [UInt8](hexText: Self.detail(line, "hash") ?? "") ?? [])
                let chained = walker.accept(link)
                #expect(chained, "event \(seq) does not chain from the NDJSON alone")
            }
            #expect(walker.events == Int64(lines.count))
            let released = try #require(lines.first { Self.detail($0, "details")?.contains("rows") == true && $0["action"] as? String == "R" })
            #expect(((released["type"] as? [String: Any])?["code"] as? String) == "110106")
            #expect(Self.entity(released, system: FHIRSystems.request) == world.requestID)
        }
    }

    @Test("people appear only as pseudonyms: no email, fiscal code, name, account id or raw value anywhere in the NDJSON")
    func noIdentityLeaks() async throws {
        try await TestHarness.run { harness in
            let world = try await world(harness)
            let body = harness.text(try await harness.request(.get, "/v1/audit/events?format=ndjson", token: world.auditor))
            #expect(body.contains("\"p_"), "the person is there, as a pseudonym")
            #expect(body.contains(world.requestID))
            let secrets = [
                world.parties.personEmail, world.parties.personEmail.uppercased(), world.parties.personFiscalCode, world.parties.personID,
                world.parties.personID.uppercased(), world.fullName, "Zebedia", "Quattrocchi", world.rawValue, "99.871",
            ]
            for secret in secrets { #expect(!body.contains(secret), "\(secret) leaked into the NDJSON") }
            // Nor does the base64 or percent-encoding of a secret hide in a detail.
            for secret in [world.parties.personEmail, world.parties.personID, world.parties.personFiscalCode] {
                #expect(!body.contains(Data(secret.utf8).base64EncodedString().dropLast(4)))
                #expect(!body.contains(secret.replacingOccurrences(of: "@", with: "%40")))
            }
        }
    }

    @Test("a company or a person gets 403 and spends none of their download budget; an auditor is charged")
    func roleGateAndBudget() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.downloads: .perMinute(1)])) { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
            let id = try await harness.acceptedRequestID(parties)
            let auditor = try await harness.activeAuditor()
            for token in [parties.company, parties.person] {
                for attempt in ["?format=ndjson", ""] {
                    let headers: HTTPFields = attempt.isEmpty ? [.accept: "application/fhir+ndjson"] : [:]
                    let refused = try await harness.request(.get, "/v1/audit/events\(attempt)", token: token, headers: headers)
                    #expect(refused.status == .forbidden, "\(harness.text(refused))")
                    #expect(refused.headers[.contentType] == "application/problem+json")
                }
            }
            // Their one download of the minute is still there.
            #expect(try await harness.request(.get, "/v1/single-requests/\(id)/data", token: parties.company).status == .ok)
            try RateLimitFixtures.expectRateLimited(
                try await harness.request(.get, "/v1/single-requests/\(id)/data", token: parties.company), harness)
            #expect(try await harness.request(.get, "/v1/me/export", token: parties.person).status == .ok)
            try RateLimitFixtures.expectRateLimited(try await harness.request(.get, "/v1/me/export", token: parties.person), harness)
            // The auditor's NDJSON is a download, on the same budget as the CSV.
            #expect(try await harness.request(.get, "/v1/audit/events?format=ndjson", token: auditor).status == .ok)
            try RateLimitFixtures.expectRateLimited(try await harness.request(.get, "/v1/audit/events?format=csv", token: auditor), harness)
            try RateLimitFixtures.expectRateLimited(try await harness.request(.get, "/v1/audit/events?format=ndjson", token: auditor), harness)
            #expect(try await harness.request(.get, "/v1/audit/events", token: auditor).status == .ok, "JSON pages are not downloads")
        }
    }

    @Test("from, to and action filter the NDJSON as they filter the JSON log; a bad filter is a 422")
    func filters() async throws {
        try await TestHarness.run { harness in
            let world = try await world(harness)
            func seqs(_ query: String) async throws -> [String] {
                let response = try await harness.request(.get, "/v1/audit/events?format=ndjson\(query)", token: world.auditor)
                try #require(response.status == .ok, "\(query): \(harness.text(response))")
                return try Self.resources(response, harness).compactMap { $0["id"] as? String }
            }
            let all = try await Self.jsonEvents(harness, auditor: world.auditor)
            let accepted = try await seqs("&action=single_request.accepted")
            #expect(accepted.count == 1)
            #expect(
                accepted
                    == (try await Self.jsonEvents(harness, auditor: world.auditor, query: "&action=single_request.accepted"))
                    .compactMap { ($0["seq"] as? Int).map(String.init) })
            // A window around the middle events: exactly those whose `at` lies in it, as the JSON log gives them.
            let middle = all[all.count / 3...(2 * all.count) / 3]
            let from = try #require(middle.first?["at"] as? String)
            let to = try #require(middle.last?["at"] as? String)
            let window = "&from=\(from)&to=\(to)"
            let inWindow = try await Self.jsonEvents(harness, auditor: world.auditor, query: window).compactMap {
                ($0["seq"] as? Int).map(String.init)
            }
            #expect(try await seqs(window) == inWindow)
            #expect(!inWindow.isEmpty && inWindow.count < all.count)
            #expect(try await seqs("&from=2100-01-01T00:00:00Z").isEmpty)
            #expect(try await seqs("&action=no.such_action").isEmpty)
            let bad = try await harness.request(.get, "/v1/audit/events?format=ndjson&from=yesterday", token: world.auditor)
            #expect(bad.status == .unprocessableContent)
            #expect(try harness.errorFields(bad) == ["from"])
        }
    }

    @Test("Accept: application/fhir+ndjson selects the NDJSON; JSON wins when both are named")
    func acceptHeader() async throws {
        try await TestHarness.run { harness in
            let auditor = try await harness.activeAuditor()
            _ = try await harness.activeUser()
            let ndjson = try await harness.request(.get, "/v1/audit/events", token: auditor, headers: [.accept: "application/fhir+ndjson"])
            #expect(ndjson.status == .ok)
            #expect(ndjson.headers[.contentType]?.hasPrefix("application/fhir+ndjson") == true)
            let lines = try Self.resources(ndjson, harness)
            #expect(!lines.isEmpty && lines.allSatisfy { $0["resourceType"] as? String == "AuditEvent" })
            let both = try await harness.request(
                .get, "/v1/audit/events", token: auditor, headers: [.accept: "application/fhir+ndjson, application/json"])
            #expect(both.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(try harness.object(both)["items"] != nil)
        }
    }

    @Test("a log of several thousand-event pages streams whole: every event once, in order, the chain unbroken across pages")
    func acrossPages() async throws {
        try await TestHarness.run { harness in
            let auditor = try await harness.activeAuditor()
            _ = try await harness.sql(
                "SELECT append_audit_event(NULL, 'system', 'account.expired', NULL, 'p_' || n::text, '{}'::jsonb) FROM generate_series(1, 2500) AS n")
            let total = try await harness.int("SELECT count(*) FROM audit_events")
            #expect(total >= 2500)
            let response = try await harness.request(.get, "/v1/audit/events?format=ndjson", token: auditor)
            try #require(response.status == .ok)
            let lines = try Self.resources(response, harness)
            #expect(lines.compactMap { $0["id"] as? String } == (1...total).map(String.init))
            var previous = String(repeating: "0", count: 64)
            for line in lines {
                #expect(Self.detail(line, "prev_hash") == previous)
                previous = Self.detail(line, "hash") ?? ""
            }
        }
    }

    @Test("the mapping: type per action family, the action code, the actor's naming system per role")
    func mapping() {
        #expect(FHIRAuditEvent.type(of: AuditAction.singleRequestDataReleased).code == "110106")
        #expect(FHIRAuditEvent.type(of: AuditAction.passwordReset).code == "110113")
        #expect(FHIRAuditEvent.type(of: AuditAction.samplesCorrected).code == "110110")
        #expect(FHIRAuditEvent.type(of: AuditAction.singleRequestAccepted).code == "rest")
        #expect(FHIRAuditEvent.action(of: AuditAction.accountCreated) == "C")
        #expect(FHIRAuditEvent.action(of: AuditAction.accountErased) == "D")
        #expect(FHIRAuditEvent.action(of: "something.new") == "E")
        #expect(FHIRAuditEvent.chainTime(Date(timeIntervalSince1970: 1_772_352_000.25)) == "2026-03-01T08:00:00.250000Z")
        #expect(FHIRAuditEvent.chainTime(Date(timeIntervalSince1970: 1_772_352_000)) == "2026-03-01T08:00:00.000000Z")
        let entry = AuditTrail.Entry(
            seq: 7, at: Date(timeIntervalSince1970: 1_772_352_000), actorID: "3f1c0f5e-0000-4000-8000-000000000001", actorRole: "third_party",
            action: AuditAction.subscriptionEnded, requestID: UUID(), subject: nil, details: #"{"kind": "group"}"#, prevHash: "00", hash: "11")
        let event = FHIRAuditEvent(entry, issuer: "https://d4h.example")
        #expect(event.agent.first?.who?.identifier?.system == FHIRAuditEvent.accountActorSystem)
        #expect(event.entity.count == 2)
        #expect(event.entity.last?.what.identifier?.system == FHIRAuditEvent.groupRequestSystem)
    }
}
