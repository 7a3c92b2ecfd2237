import BrokerOpenAPI
import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Partial grants (issue 29, item 1): a person grants all of a request or less, never more, and every path
/// that releases data releases only what was granted.
@Suite("Consent grants", .serialized)
struct ConsentGrantTests {
    /// The person's samples: heart rate, steps and weight on three days.
    static let samples: [(type: String, value: Double, at: String)] = [
        ("heart_rate", 61, "2026-03-01T08:00:00Z"), ("heart_rate", 72, "2026-03-02T08:00:00Z"), ("heart_rate", 80, "2026-03-05T08:00:00Z"),
        ("step_count", 1000, "2026-03-02T10:00:00Z"), ("weight", 70.1, "2026-03-02T09:00:00Z"),
    ]

    static let askedWindow = Components.Schemas.RequestWindowInput(from: "2026-03-01T00:00:00Z", to: "2026-03-31T00:00:00Z")

    @Test("a partial grant: the company sees what was asked and what was granted, and downloads only the grant, by every path")
    func partialGrant() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            #expect(try await harness.upload(Self.samples, token: parties.person).status == .ok)
            let id = try await harness.sentRequestID(
                parties, types: ["heart_rate", "step_count", "weight"], subscriptionDays: 365, window: Self.askedWindow)
            let accepted = try await harness.request(
                .post, "/v1/single-requests/\(id)/accept",
                json: #"{"types":["heart_rate"],"window":{"from":"2026-03-02T00:00:00Z","to":"2026-03-03T00:00:00Z"},"subscription":{"days":0}}"#,
                token: parties.person)
            #expect(accepted.status == .ok, "\(harness.text(accepted))")
            let body = try harness.object(accepted)
            #expect(body["types"] as? [String] == ["heart_rate", "step_count", "weight"])
            let grant = try #require(body["grant"] as? [String: Any])
            #expect(grant["types"] as? [String] == ["heart_rate"])
            #expect(grant["narrowed"] as? Bool == true)
            #expect((grant["window"] as? [String: Any])?["from"] as? String == "2026-03-02T00:00:00Z")
            #expect(grant["subscriptionDays"] == nil || grant["subscriptionDays"] is NSNull)
            let subscription = try #require(body["subscription"] as? [String: Any])
            #expect(subscription["days"] as? Int == 365)
            #expect(subscription["status"] as? String == "ended")
            #expect(subscription["endedBy"] as? String == "user")

            // The company's read and list say the same.
            let read = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: parties.company))
            #expect((read["grant"] as? [String: Any])?["id"] as? String == grant["id"] as? String)
            let listed = try harness.object(try await harness.request(.get, "/v1/single-requests", token: parties.company))
            let item = (listed["items"] as? [[String: Any]])?.first { $0["id"] as? String == id }
            #expect((item?["grant"] as? [String: Any])?["types"] as? [String] == ["heart_rate"])

            // JSON, CSV and a cursor replay: only heart rate inside the granted window.
            let json = try await harness.download(id, token: parties.company)
            #expect(json.items.map { "\($0.type)@\($0.at)" } == ["heart_rate@2026-03-02T08:00:00Z"])
            #expect(json.availableTypes == ["heart_rate"])
            let csv = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=csv", token: parties.company)
            #expect(harness.text(csv).split(separator: "\r\n").dropFirst().map(String.init) == ["heart_rate,2026-03-02T08:00:00Z,72,beats/min"])
            let again = try await harness.download(id, token: parties.company)
            #expect(again.items.map(\.type) == ["heart_rate"])
            // A one-off grant: what arrives later is not released, even inside the window and of a granted type.
            try await harness.uploadHeartRates(["2026-03-02T12:00:00Z"], token: parties.person, firstValue: 99)
            let later = try await harness.download(id, cursor: json.nextCursor, token: parties.company)
            #expect(later.items.isEmpty)
            let replayed = try await harness.download(id, cursor: json.nextCursor, token: parties.company)
            #expect(replayed.items.isEmpty)
            // Positions were not asked, let alone granted.
            let positions = try await harness.request(.get, "/v1/single-requests/\(id)/positions", token: parties.company)
            #expect(positions.status == .conflict)

            // The person's access log and the audit event name the grant.
            let log = try harness.object(try await harness.request(.get, "/v1/me/access-log", token: parties.person))
            let entry = (log["items"] as? [[String: Any]])?.first
            #expect(entry?["grantId"] as? String == grant["id"] as? String)
            let details = try await harness.sql(
                "SELECT details::text FROM audit_events WHERE request_id = '\(id)' AND action = 'single_request.accepted'")
            let text = try #require(try details.first?.decode(String.self))
            #expect(text.contains(grant["id"] as? String ?? "?"))
            #expect(text.contains(#""narrowed": true"#))
        }
    }

    @Test("no body grants all that was asked; a shorter subscription ends sooner; the grant is in the webhook")
    func wholeAndShorter() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let parties = try await harness.requestParties()
                _ = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("grants"))","secret":"\#(WebhookFixtures.secret)"}"#,
                    token: parties.company)
                let whole = try await harness.sentRequestID(parties, types: ["heart_rate", "weight"], subscriptionDays: 30)
                let wholeBody = try harness.object(try await harness.request(.post, "/v1/single-requests/\(whole)/accept", token: parties.person))
                let wholeGrant = try #require(wholeBody["grant"] as? [String: Any])
                #expect(wholeGrant["types"] as? [String] == ["heart_rate", "weight"])
                #expect(wholeGrant["narrowed"] as? Bool == false)
                #expect(wholeGrant["subscriptionDays"] as? Int == 30)

                let shorter = try await harness.sentRequestID(parties, types: ["step_count"], subscriptionDays: 30)
                let shorterBody = try harness.object(
                    try await harness.request(
                        .post, "/v1/single-requests/\(shorter)/accept", json: #"{"subscription":{"days":7}}"#, token: parties.person))
                let subscription = try #require(shorterBody["subscription"] as? [String: Any])
                #expect(subscription["days"] as? Int == 30)
                #expect(subscription["status"] as? String == "active")
                let decided = try #require((shorterBody["decidedAt"] as? String).flatMap(Timestamp.parse))
                let endsAt = try #require((subscription["endsAt"] as? String).flatMap(Timestamp.parse))
                #expect(abs(endsAt.timeIntervalSince(decided) - 7 * 86_400) < 2)

                #expect(await eventually { await receiver.log.delivered("grants").count == 2 })
                let events = try await receiver.log.delivered("grants").map {
                    try #require(try JSONSerialization.jsonObject(with: $0.body) as? [String: Any])
                }
                // Events of different requests may be delivered in either order.
                let grants = events.compactMap { ($0["data"] as? [String: Any])?["grant"] as? [String: Any] }
                    .sorted { ($0["subscriptionDays"] as? Int ?? 0) > ($1["subscriptionDays"] as? Int ?? 0) }
                #expect(grants.map { $0["types"] as? [String] ?? [] } == [["heart_rate", "weight"], ["step_count"]])
                #expect(grants.map { $0["subscriptionDays"] as? Int } == [30, 7])
                let window = try #require(grants.first?["window"] as? [String: Any])
                #expect(window.keys.sorted() == ["from", "to"], "a missing end is null, not absent")
            }
        }
    }

    @Test("a grant wider than the request, or malformed, is a 422 naming the field, and the request stays pending")
    func widerGrantsRefused() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.sentRequestID(parties, types: ["heart_rate", "weight"], subscriptionDays: 30, window: Self.askedWindow)
            // A second pending request to the same person, named by fiscal code: a one-off.
            let byCode = try await harness.request(
                .post, "/v1/single-requests",
                json: #"{"subject":{"fiscalCode":"\#(parties.personFiscalCode)"},"types":["heart_rate"],"purpose":"Check-up","purposeCode":"TREAT"}"#,
                token: parties.company)
            let oneOff = try #require(try harness.object(byCode)["id"] as? String, "\(harness.text(byCode))")
            let cases: [(String, String, String)] = [
                (id, #"{"types":["heart_rate","step_count"]}"#, "types[1]"),
                (id, #"{"types":[]}"#, "types"),
                (id, #"{"types":["heart_rate","heart_rate"]}"#, "types[1]"),
                (id, #"{"types":["blood_gold"]}"#, "types[0]"),
                (id, #"{"window":{"from":"2026-02-28T23:59:59Z"}}"#, "window.from"),
                (id, #"{"window":{"to":"2026-03-31T00:00:01Z"}}"#, "window.to"),
                (id, #"{"window":{"from":"2026-03-10T00:00:00Z","to":"2026-03-09T00:00:00Z"}}"#, "window.from"),
                (id, #"{"window":{"from":"yesterday"}}"#, "window.from"),
                (id, #"{"subscription":{"days":31}}"#, "subscription.days"),
                (id, #"{"subscription":{"days":-1}}"#, "subscription.days"),
                (oneOff, #"{"subscription":{"days":1}}"#, "subscription.days"),
            ]
            for (request, body, field) in cases {
                let response = try await harness.request(.post, "/v1/single-requests/\(request)/accept", json: body, token: parties.person)
                #expect(response.status == .unprocessableContent, "\(body): \(response.status)")
                let errors = try harness.object(response)["errors"] as? [[String: Any]] ?? []
                #expect(errors.contains { $0["field"] as? String == field }, "\(body): \(harness.text(response))")
            }
            for request in [id, oneOff] {
                let read = try harness.object(try await harness.request(.get, "/v1/single-requests/\(request)", token: parties.person))
                #expect(read["status"] as? String == "pending")
                #expect(read["grant"] == nil)
            }
            // The same checks hold in the database: a widened grant cannot be stored, whatever the code does.
            await #expect(throws: (any Error).self) {
                try await harness.sql("UPDATE single_requests SET types = '{1,2,3,4}' WHERE id = '\(id)'")
            }
        }
    }

    @Test("a type the person does not share is never granted: a grant naming it is a 422, no body grants the rest")
    func unsharedTypesNeverGranted() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let saved = try await harness.request(
                .put, "/v1/me/sharing", json: #"{"types":[{"type":"weight","shared":false},{"type":"step_count","shared":false}]}"#,
                token: parties.person)
            #expect(saved.status == .ok, "\(harness.text(saved))")
            let mixed = try await harness.sentRequestID(parties, types: ["heart_rate", "weight"])
            let naming = try await harness.request(
                .post, "/v1/single-requests/\(mixed)/accept", json: #"{"types":["heart_rate","weight"]}"#, token: parties.person)
            #expect(naming.status == .unprocessableContent)
            let errors = try harness.object(naming)["errors"] as? [[String: Any]] ?? []
            #expect(errors.map { $0["field"] as? String } == ["types[1]"], "\(harness.text(naming))")
            let whole = try harness.object(try await harness.request(.post, "/v1/single-requests/\(mixed)/accept", token: parties.person))
            let grant = try #require(whole["grant"] as? [String: Any])
            #expect(grant["types"] as? [String] == ["heart_rate"])
            #expect(grant["narrowed"] as? Bool == true)

            // A request for unshared types only: no body grants nothing, so it is a 422 and stays pending.
            let unsharedOnly = try await harness.request(
                .post, "/v1/single-requests",
                json: #"{"subject":{"fiscalCode":"\#(parties.personFiscalCode)"},"types":["weight"],"purpose":"Scale","purposeCode":"TREAT"}"#,
                token: parties.company)
            let unsharedID = try #require(try harness.object(unsharedOnly)["id"] as? String)
            let nothing = try await harness.request(.post, "/v1/single-requests/\(unsharedID)/accept", token: parties.person)
            #expect(nothing.status == .unprocessableContent)
            let read = try harness.object(try await harness.request(.get, "/v1/single-requests/\(unsharedID)", token: parties.person))
            #expect(read["status"] as? String == "pending")
        }
    }

    @Test("a request for unshared types only, one to nobody and one to a person who shares all read alike to the company")
    func preferencesAreNoOracle() async throws {
        try await TestHarness.run { harness in
            let sharesAll = try await harness.requestParties()
            var withholder = TestHarness.Person()
            withholder.fiscalCode = TestHarness.uniqueFiscalCode()
            let withholderToken = try await harness.activeUser(withholder)
            let saved = try await harness.request(
                .put, "/v1/me/sharing", json: #"{"types":[{"type":"blood_glucose","shared":false}]}"#, token: withholderToken)
            #expect(saved.status == .ok, "\(harness.text(saved))")
            try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(sharesAll.companyID)', 'https://hooks.example.com/d4h', 'a-secret-of-16-chars')"
            )
            var answers: [TestResponse] = []
            for fiscalCode in [withholder.fiscalCode, TestHarness.uniqueFiscalCode(), sharesAll.personFiscalCode] {
                answers.append(
                    try await harness.request(
                        .post, "/v1/single-requests",
                        json:
                            #"{"subject":{"fiscalCode":"\#(fiscalCode)"},"types":["blood_glucose"],"purpose":"Diabetes study","purposeCode":"HRESCH"}"#,
                        token: sharesAll.company))
            }
            #expect(answers.map(\.status) == [.created, .created, .created])
            let shapes = try answers.map { try RequestPrivacyTests.shape(try harness.object($0)) }
            #expect(Set(shapes).count == 1, "\(shapes)")
            #expect(Set(answers.map(RequestPrivacyTests.headers)).count == 1)
            var reads: [String] = []
            for answer in answers {
                let id = try #require(try harness.object(answer)["id"] as? String)
                let read = try await harness.request(.get, "/v1/single-requests/\(id)", token: sharesAll.company)
                reads.append(try RequestPrivacyTests.shape(try harness.object(read)))
            }
            #expect(Set(reads).count == 1, "\(reads)")
            #expect(try await harness.int("SELECT count(*) FROM webhook_events WHERE third_party_id = '\(sharesAll.companyID)'") == 0)
        }
    }

    @Test("a run's request keeps its window and subscription, and is never granted without position")
    func runRequestsStayWhole() throws {
        let asked = ConsentTerms(
            types: [.position, .sample(.heartRate)], windowFrom: Date(timeIntervalSince1970: 1_800_000_000),
            windowTo: Date(timeIntervalSince1970: 1_800_020_000), subscriptionDays: 2)
        let heartRateOnly = GrantNarrowing(types: ["heart_rate"])
        #expect(throws: SingleRequestError.self) {
            try SingleRequestService.grantedTerms(heartRateOnly, asked: asked, unshared: [], isRun: true)
        }
        #expect(throws: SingleRequestError.self) {
            try SingleRequestService.grantedTerms(GrantNarrowing(subscriptionDays: 1), asked: asked, unshared: [], isRun: true)
        }
        // Without heart rate the run still works: the safety desk simply sees none.
        let positionOnly = try SingleRequestService.grantedTerms(GrantNarrowing(types: ["position"]), asked: asked, unshared: [], isRun: true)
        #expect(positionOnly.types == [.position])
        // The same narrowing is fine on a request that is not a run's.
        #expect(try SingleRequestService.grantedTerms(heartRateOnly, asked: asked, unshared: [], isRun: false).types == [.sample(.heartRate)])
    }

    @Test("the console's accept form: Accept all is one click; chosen types, days and a day range grant part")
    func consoleForm() throws {
        let asked = "2026-03-01T08:30:00Z"
        var form = FormFields(urlEncoded: "scope=all&types=heart_rate&days=3&askedDays=30")
        #expect(try Console.grantNarrowing(form) == .everything)
        form = FormFields(
            urlEncoded:
                "scope=selected&types=heart_rate&from=2026-03-01&askedFrom=2026-03-01&askedFromTime=\(asked)&to=2026-03-10&askedTo=2026-03-31"
                + "&askedToTime=2026-03-31T00:00:00Z&days=30&askedDays=30")
        let narrowing = try Console.grantNarrowing(form)
        #expect(narrowing.types == ["heart_rate"])
        #expect(narrowing.windowFrom == nil, "an unchanged day keeps the asked start, with its time")
        #expect(narrowing.windowTo == "2026-03-10T23:59:59.999Z")
        #expect(narrowing.subscriptionDays == nil)
        form = FormFields(
            urlEncoded: "scope=selected&types=weight&from=2026-02-01&askedFrom=2026-03-01&askedFromTime=\(asked)&days=0&askedDays=30")
        let earlier = try Console.grantNarrowing(form)
        #expect(earlier.windowFrom == asked, "a day before the asked start is kept inside the request")
        #expect(earlier.subscriptionDays == 0)
    }
}
