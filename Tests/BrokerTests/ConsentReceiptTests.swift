import BrokerTestSupport
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Signed consent receipts (issue 29, item 5): one for every grant and every end of one, the same document
/// for the person and the company, checkable offline against the served key set; and the request as a FHIR
/// `Consent`. The attacks: a receipt with one changed claim, or signed by another key, must fail both
/// `d4h consent verify` and the API's check.
@Suite("Consent receipts", .serialized)
struct ConsentReceiptTests {
    static let key = ConsentSigningKey.generate()
    static let issuer = "http://127.0.0.1:8080"

    static func withKey(_ configuration: inout BrokerConfiguration) {
        WebhookFixtures.fast(&configuration)
        configuration.consentSigningKey = key
    }

    // MARK: Helpers

    /// A request's receipts as `token` lists them: (status, JWS, claims).
    static func receipts(_ harness: TestHarness, request id: String, token: String) async throws -> [[String: Any]] {
        let response = try await harness.request(.get, "/v1/single-requests/\(id)/receipts", token: token)
        try #require(response.status == .ok, "receipts answered \(response.status): \(harness.text(response))")
        return try harness.object(response)["items"] as? [[String: Any]] ?? []
    }

    static func claims(of jws: String) throws -> [String: Any] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let payload = try #require(base64URL(parts[1]))
        return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
    }

    /// Decoded here, apart from the server's own `Base64URL`, so the checks do not share its mistakes.
    static func base64URL(_ text: some StringProtocol) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `jws` with its payload replaced by `change(claims)`, header and signature kept.
    static func tampered(_ jws: String, _ change: (inout [String: Any]) -> Void) throws -> String {
        let parts = jws.split(separator: ".").map(String.init)
        var claims = try claims(of: jws)
        change(&claims)
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return [parts[0], base64URL(payload), parts[2]].joined(separator: ".")
    }

    /// The same claims, signed by `other` under a header naming the server's key.
    static func signedByAnotherKey(_ jws: String, other: ConsentSigningKey) throws -> String {
        let parts = jws.split(separator: ".").map(String.init)
        let signature = try other.sign(Data("\(parts[0]).\(parts[1])".utf8))
        return [parts[0], parts[1], base64URL(signature)].joined(separator: ".")
    }

    /// The API's check of a receipt: (valid, problem).
    static func check(_ harness: TestHarness, _ jws: String) async throws -> (valid: Bool, problem: String?, claims: [String: Any]?) {
        let body = try JSONSerialization.data(withJSONObject: ["receipt": jws])
        let response = try await harness.request(.post, "/v1/consent-receipts/verification", json: String(decoding: body, as: UTF8.self))
        try #require(response.status == .ok, "verification answered \(response.status): \(harness.text(response))")
        let answer = try harness.object(response)
        return (answer["valid"] as? Bool ?? false, answer["problem"] as? String, answer["claims"] as? [String: Any])
    }

    // MARK: Issuing

    @Test("a grant and a stop by either side each yield a receipt with the grant's claims; both sides hold the same documents")
    func grantAndStops() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: Self.withKey) { harness in
                let parties = try await harness.requestParties(companyName: "Receipts Research S.p.A.")
                _ = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("receipts"))","secret":"\#(WebhookFixtures.secret)"}"#,
                    token: parties.company)
                try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
                let id = try await harness.sentRequestID(
                    parties, types: ["heart_rate", "step_count"], subscriptionDays: 30,
                    window: .init(from: "2026-01-01T00:00:00Z", to: "2026-06-30T00:00:00Z"))
                // The person grants part of it: one type and 10 days.
                let accepted = try await harness.request(
                    .post, "/v1/single-requests/\(id)/accept", json: #"{"types":["heart_rate"],"subscription":{"days":10}}"#,
                    token: parties.person)
                try #require(accepted.status == .ok, "\(harness.text(accepted))")
                let grantID = try #require((try harness.object(accepted)["grant"] as? [String: Any])?["id"] as? String)

                let granted = try await Self.receipts(harness, request: id, token: parties.company)
                try #require(granted.count == 1)
                let jws = try #require(granted[0]["receipt"] as? String)
                let claims = try Self.claims(of: jws)
                #expect(granted[0]["status"] as? String == "granted")
                #expect(claims["status"] as? String == "granted")
                #expect(claims["requestId"] as? String == id)
                #expect(claims["grantId"] as? String == grantID)
                #expect(claims["types"] as? [String] == ["heart_rate"])
                #expect(claims["subscriptionDays"] as? Int == 10)
                #expect(claims["purpose"] as? String == "Cardiology study")
                #expect(claims["purposeCode"] as? String == "HRESCH")
                #expect(claims["iss"] as? String == Self.issuer)
                #expect(claims["endedBy"] == nil)
                let window = try #require(claims["window"] as? [String: Any])
                #expect(window["from"] as? String == "2026-01-01T00:00:00Z" && window["to"] as? String == "2026-06-30T00:00:00Z")
                let company = try #require(claims["company"] as? [String: Any])
                #expect(company["id"] as? String == parties.companyID && company["name"] as? String == "Receipts Research S.p.A.")
                // The person by the company's pseudonym, never by what identifies them.
                let subject = try #require(claims["subject"] as? String)
                #expect(subject.hasPrefix("s_") && subject.count == 34)
                for secret in [parties.personEmail, parties.personFiscalCode, parties.personID] {
                    #expect(!jws.contains(secret) && !subject.contains(secret))
                }
                let auditPseudonym = try await harness.sql(
                    "SELECT subject FROM audit_events WHERE action = 'single_request.accepted' AND request_id = '\(id)'")
                #expect(try auditPseudonym.first?.decode(String.self) != subject, "a company must never hold the auditors' pseudonym")
                // The person holds the very same document.
                #expect(try await Self.receipts(harness, request: id, token: parties.person).map { $0["receipt"] as? String } == [jws])

                // The person stops sharing: a second receipt, revoked by the user.
                #expect(try await harness.request(.delete, "/v1/single-requests/\(id)/subscription", token: parties.person).status == .ok)
                let both = try await Self.receipts(harness, request: id, token: parties.company)
                #expect(both.map { $0["status"] as? String } == ["granted", "revoked"])
                let revoked = try Self.claims(of: try #require(both.last?["receipt"] as? String))
                #expect(revoked["endedBy"] as? String == "user")
                #expect(revoked["grantId"] as? String == grantID && revoked["subject"] as? String == subject)

                // The company stops another one: revoked by the third party, under another pseudonym (one per request,
                // so two requests' receipts do not tell the company they name one person).
                let second = try await harness.acceptedRequestID(parties, subscriptionDays: 5)
                #expect(try await harness.request(.delete, "/v1/single-requests/\(second)/subscription", token: parties.company).status == .ok)
                let stopped = try await Self.receipts(harness, request: second, token: parties.person)
                #expect(stopped.map { $0["status"] as? String } == ["granted", "revoked"])
                let byCompany = try Self.claims(of: try #require(stopped.last?["receipt"] as? String))
                #expect(byCompany["endedBy"] as? String == "third_party")
                let secondSubject = try #require(byCompany["subject"] as? String)
                #expect(secondSubject != subject)
                #expect(try Self.claims(of: try #require(stopped.first?["receipt"] as? String))["subject"] as? String == secondSubject)

                // The person's own list: all four, newest first.
                let mine = try await harness.request(.get, "/v1/me/consent-receipts?limit=3", token: parties.person)
                try #require(mine.status == .ok, "\(harness.text(mine))")
                let page = try harness.object(mine)
                let firstPage = page["items"] as? [[String: Any]] ?? []
                #expect(firstPage.map { $0["requestId"] as? String } == [second, second, id])
                let cursor = try #require(page["nextCursor"] as? String)
                let rest = try harness.object(
                    try await harness.request(.get, "/v1/me/consent-receipts?limit=3&cursor=\(cursor)", token: parties.person))
                #expect((rest["items"] as? [[String: Any]])?.map { $0["status"] as? String } == ["granted"])
                #expect(rest["nextCursor"] == nil)
                // Companies and auditors have no list of their own.
                #expect(try await harness.request(.get, "/v1/me/consent-receipts", token: parties.company).status == .forbidden)

                // The webhooks carry the receipts: the accept its grant's, the end its end's.
                #expect(await eventually { await receiver.log.delivered("receipts").count == 4 })
                let events = try await receiver.log.delivered("receipts").map { received in
                    try #require(try JSONSerialization.jsonObject(with: received.body) as? [String: Any])
                }
                let first = events.filter { ($0["data"] as? [String: Any])?["requestId"] as? String == id }
                #expect(first.map { $0["type"] as? String } == ["single_request.accepted", "subscription.ended"])
                #expect(first.map { ($0["data"] as? [String: Any])?["receipt"] as? String } == both.map { $0["receipt"] as? String })
            }
        }
    }

    @Test("a block ends a subscription with a receipt that says revoked, as the company is told; an expiry with one that says expired")
    func blockAndExpiry() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties()
            let blocked = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            #expect(try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: parties.person).status == .ok)
            let afterBlock = try await Self.receipts(harness, request: blocked, token: parties.company)
            #expect(afterBlock.map { $0["status"] as? String } == ["granted", "revoked"])
            let claims = try Self.claims(of: try #require(afterBlock.last?["receipt"] as? String))
            #expect(claims["endedBy"] as? String == "user")
            // The block is the person's: the document the company holds does not disclose it.
            #expect(!(try #require(afterBlock.last?["receipt"] as? String)).contains("block"))
            #expect(!String(describing: claims).contains("block"))

            let other = try await harness.requestParties()
            let expiring = try await harness.acceptedRequestID(other, subscriptionDays: 1)
            let endsAt = try await harness.sql(
                "UPDATE single_requests SET ends_at = date_trunc('second', now()) - interval '1 minute' WHERE id = '\(expiring)' RETURNING ends_at")
            let end = try #require(try endsAt.first?.decode(Date.self))
            // The background loop announces expiries every 30 s; the test runs its pass now, with the server's key.
            try await TestDatabase.withClient(harness.databaseURL) { client in
                let service = SingleRequestService(
                    client: client, pseudonymizer: Pseudonymizer(client: client),
                    receipts: ConsentReceipts(client: client, key: Self.key, issuer: Self.issuer))
                let done = "SELECT count(*) FROM single_requests WHERE id = '\(expiring)' AND expiry_announced"
                _ = try await sweepRounds(until: { try await harness.int(done) == 1 }) {
                    try await service.announceExpiries(logger: TestDatabase.logger)
                }
            }
            let expired = try await Self.receipts(harness, request: expiring, token: other.person)
            #expect(expired.map { $0["status"] as? String } == ["granted", "expired"])
            let expiry = try Self.claims(of: try #require(expired.last?["receipt"] as? String))
            #expect(expiry["endedBy"] as? String == "third_party")
            #expect(expiry["statusAt"] as? String == Timestamp.rfc3339(end))
            #expect(try await Self.check(harness, try #require(expired.last?["receipt"] as? String)).valid)
        }
    }

    @Test("a refusal yields no receipt: the company's answers for a refused request match a pending one's")
    func refusals() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties()
            let refused = try await harness.sentRequestID(parties)
            #expect(try await harness.request(.post, "/v1/single-requests/\(refused)/refuse", token: parties.person).status == .ok)
            #expect(try await harness.sql("SELECT 1 FROM consent_receipts").isEmpty)
            let other = try await harness.requestParties()
            let pending = try await harness.sentRequestID(other)
            let refusedReceipts = try await harness.request(.get, "/v1/single-requests/\(refused)/receipts", token: parties.company)
            let pendingReceipts = try await harness.request(.get, "/v1/single-requests/\(pending)/receipts", token: other.company)
            #expect(harness.text(refusedReceipts) == #"{"items":[]}"# && harness.text(pendingReceipts) == harness.text(refusedReceipts))
            // The Consent resource: proposed to the company, with no person in it; rejected to the person.
            let seenByCompany = try harness.object(try await harness.request(.get, "/v1/single-requests/\(refused)/consent", token: parties.company))
            #expect(seenByCompany["status"] as? String == "proposed")
            #expect(seenByCompany["patient"] == nil && seenByCompany["performer"] == nil)
            let seenByPending = try harness.object(try await harness.request(.get, "/v1/single-requests/\(pending)/consent", token: other.company))
            #expect(Set(seenByCompany.keys) == Set(seenByPending.keys))
            let seenByPerson = try harness.object(try await harness.request(.get, "/v1/single-requests/\(refused)/consent", token: parties.person))
            #expect(seenByPerson["status"] as? String == "rejected")
            #expect((seenByPerson["provision"] as? [String: Any])?["type"] as? String == "deny")
        }
    }

    @Test("a company reads neither another company's receipts nor its Consent (404), and gets its own pseudonym per person")
    func otherCompanies() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.acceptedRequestID(parties)
            let rival = try await harness.activeCompany(TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber()))
            for path in ["/v1/single-requests/\(id)/receipts", "/v1/single-requests/\(id)/consent"] {
                let answer = try await harness.request(.get, path, token: rival)
                #expect(answer.status == .notFound, "\(path): \(harness.text(answer))")
                #expect(!harness.text(answer).contains("s_"))
            }
            // The rival asks the same person: its pseudonym for them is its own.
            let rivalParties = RequestParties(
                company: rival, companyID: try await harness.accountID(rival), person: parties.person, personID: parties.personID,
                personEmail: parties.personEmail, personFiscalCode: parties.personFiscalCode)
            let rivals = try await harness.acceptedRequestID(rivalParties)
            let mine = try Self.claims(
                of: try #require(try await Self.receipts(harness, request: id, token: parties.company).first?["receipt"] as? String))
            let theirs = try Self.claims(
                of: try #require(try await Self.receipts(harness, request: rivals, token: rival).first?["receipt"] as? String))
            #expect(mine["subject"] as? String != theirs["subject"] as? String)
        }
    }

    // MARK: Checking

    @Test("the served JWK set verifies real receipts with swift-crypto alone")
    func keySet() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.acceptedRequestID(parties)
            let jws = try #require(try await Self.receipts(harness, request: id, token: parties.person).first?["receipt"] as? String)
            let keys = try await harness.request(.get, "/v1/consent-receipts/keys")
            #expect(keys.status == .ok)
            let set = try #require(try harness.object(keys)["keys"] as? [[String: Any]])
            try #require(set.count == 1)
            #expect(set[0]["kty"] as? String == "OKP" && set[0]["crv"] as? String == "Ed25519" && set[0]["alg"] as? String == "EdDSA")
            let xText = try #require(set[0]["x"] as? String)
            let x = try #require(Self.base64URL(xText))
            let publicKey = try Curve25519.Signing.PublicKey(rawRepresentation: x)
            #expect(publicKey.rawRepresentation == Self.key.publicKey.rawRepresentation)
            // The kid is the RFC 7638 thumbprint, recomputed here from x.
            let thumbprint = Self.base64URL(
                Data(SHA256.hash(data: Data(#"{"crv":"Ed25519","kty":"OKP","x":"\#(set[0]["x"] as? String ?? "")"}"#.utf8))))
            #expect(set[0]["kid"] as? String == thumbprint)
            let parts = jws.split(separator: ".").map(String.init)
            let headerBytes = try #require(Self.base64URL(parts[0]))
            let header = try #require(try JSONSerialization.jsonObject(with: headerBytes) as? [String: String])
            #expect(header == ["alg": "EdDSA", "typ": "consent-receipt+jwt", "kid": thumbprint])
            #expect(publicKey.isValidSignature(try #require(Self.base64URL(parts[2])), for: Data("\(parts[0]).\(parts[1])".utf8)))
        }
    }

    @Test("a receipt with one changed claim, or signed by another key, fails the API's check; the receipt as issued passes")
    func attacksOnTheAPICheck() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.acceptedRequestID(parties, subscriptionDays: 5)
            let jws = try #require(try await Self.receipts(harness, request: id, token: parties.person).first?["receipt"] as? String)
            let genuine = try await Self.check(harness, jws)
            #expect(genuine.valid && genuine.problem == nil)
            #expect(genuine.claims?["requestId"] as? String == id)
            let other = ConsentSigningKey.generate()
            let claims = ConsentReceipts.unverifiedClaims(of: jws)
            let forgeries: [(String, String)] = [
                ("one more type", try Self.tampered(jws) { $0["types"] = ["heart_rate", "position"] }),
                ("a longer subscription", try Self.tampered(jws) { $0["subscriptionDays"] = 3650 }),
                (
                    "another status",
                    try Self.tampered(jws) {
                        $0["status"] = "revoked"
                        $0["endedBy"] = "third_party"
                    }
                ),
                (
                    "another company",
                    try Self.tampered(jws) { $0["company"] = ["id": UUID().uuidString.lowercased(), "name": "X", "vatNumber": "1"] }
                ),
                ("signed by another key under the server's kid", try Self.signedByAnotherKey(jws, other: other)),
                ("signed by another key under its own kid", try ConsentReceiptJWS.sign(try #require(claims), with: other)),
                (
                    "alg none",
                    Self.base64URL(Data(#"{"alg":"none","kid":"\#(Self.key.keyID)","typ":"consent-receipt+jwt"}"#.utf8)) + "."
                        + jws.split(separator: ".")[1] + "."
                ),
                ("no signature", jws.split(separator: ".")[0...1].joined(separator: ".") + "."),
                ("a changed signature", String(jws.dropLast()) + (jws.last == "A" ? "B" : "A")),
            ]
            for (what, forged) in forgeries {
                let answer = try await Self.check(harness, forged)
                #expect(!answer.valid, "\(what) passed the API's check")
                #expect(answer.claims == nil && answer.problem?.isEmpty == false, "\(what): \(String(describing: answer.problem))")
            }
            // A body that is no receipt at all is a verdict too, not a server error.
            #expect(try await Self.check(harness, "not a receipt").problem?.contains("not a compact JWS") == true)
        }
    }

    @Test("`d4h consent verify` passes the receipt as issued and fails one with a changed claim or another key's signature")
    func attacksOnTheCommand() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.acceptedRequestID(parties)
            let jws = try #require(try await Self.receipts(harness, request: id, token: parties.person).first?["receipt"] as? String)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-receipts-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let jwks = directory.appendingPathComponent("keys.json")
            try Data(harness.text(try await harness.request(.get, "/v1/consent-receipts/keys")).utf8).write(to: jwks)
            let file = directory.appendingPathComponent("receipt.jwt")
            try Data(jws.utf8).write(to: file)

            let valid = try await D4HCommand.run(["consent", "verify", file.path, "--jwks", jwks.path], environment: [:])
            #expect(valid.status == 0, "\(valid.output)")
            #expect(valid.output.contains("valid: signed by key \(Self.key.keyID)") && valid.output.contains(id))
            let pinned = try await D4HCommand.run(
                ["consent", "verify", jws, "--public-key", Self.key.publicKey.rawRepresentation.base64EncodedString()], environment: [:])
            #expect(pinned.status == 0, "\(pinned.output)")

            let changed = try Self.tampered(jws) { $0["types"] = ["heart_rate", "position"] }
            let other = try Self.signedByAnotherKey(jws, other: ConsentSigningKey.generate())
            for (what, forged) in [("a changed claim", changed), ("another key", other)] {
                let run = try await D4HCommand.run(["consent", "verify", forged, "--jwks", jwks.path], environment: [:])
                #expect(run.status == 1, "\(what): \(run.output)")
                #expect(
                    run.output.contains("invalid: the signature does not verify") && !run.output.contains("valid: signed"), "\(what): \(run.output)")
            }
            // Checked against another server's key, the genuine receipt does not pass either.
            let stranger = try await D4HCommand.run(
                ["consent", "verify", jws, "--public-key", ConsentSigningKey.generate().publicKey.rawRepresentation.base64EncodedString()],
                environment: [:])
            #expect(stranger.status == 1 && stranger.output.contains("not among the trusted keys"), "\(stranger.output)")
        }
    }

    // MARK: FHIR

    @Test("the request as a FHIR R4 Consent: active once granted, inactive once ended, the person by pseudonym only")
    func fhirConsent() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties(companyName: "Consent Analytics S.r.l.")
            let id = try await harness.sentRequestID(
                parties, types: ["heart_rate", "position"], subscriptionDays: 7,
                window: .init(from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"))
            let pending = try await harness.request(.get, "/v1/single-requests/\(id)/consent", token: parties.company)
            #expect(pending.status == .ok && pending.headers[.contentType]?.hasPrefix("application/fhir+json") == true)
            #expect(try harness.object(pending)["status"] as? String == "proposed")
            #expect(try harness.object(pending)["patient"] == nil, "a pending request must not tell the company a person is there")
            #expect(try await harness.request(.post, "/v1/single-requests/\(id)/accept", token: parties.person).status == .ok)

            let answer = try await harness.request(.get, "/v1/single-requests/\(id)/consent", token: parties.company)
            let consent = try harness.object(answer)
            let text = harness.text(answer)
            for secret in [parties.personEmail, parties.personFiscalCode, parties.personID] { #expect(!text.contains(secret)) }
            #expect(consent["resourceType"] as? String == "Consent" && consent["id"] as? String == id)
            #expect(consent["status"] as? String == "active")
            let scope = (consent["scope"] as? [String: Any])?["coding"] as? [[String: Any]]
            #expect(scope?.first?["code"] as? String == "patient-privacy")
            let category = (consent["category"] as? [[String: Any]])?.first?["coding"] as? [[String: Any]]
            #expect(category?.first?["system"] as? String == "http://loinc.org" && category?.first?["code"] as? String == "59284-0")
            let receipt = try #require(try await Self.receipts(harness, request: id, token: parties.company).first?["receipt"] as? String)
            let subject = try #require(try Self.claims(of: receipt)["subject"] as? String)
            let patient = try #require((consent["patient"] as? [String: Any])?["identifier"] as? [String: Any])
            #expect(patient["value"] as? String == subject)
            #expect((consent["performer"] as? [[String: Any]])?.count == 1)
            let attachment = try #require(consent["sourceAttachment"] as? [String: Any])
            #expect(attachment["contentType"] as? String == "application/jose")
            #expect((attachment["data"] as? String).flatMap { Data(base64Encoded: $0) } == Data(receipt.utf8))
            let provision = try #require(consent["provision"] as? [String: Any])
            #expect(provision["type"] as? String == "permit")
            let codes = (provision["code"] as? [[String: Any]])?.compactMap { (($0["coding"] as? [[String: Any]])?.first?["code"] as? String) }
            #expect(codes == ["heart_rate", "position"])
            #expect((provision["dataPeriod"] as? [String: Any])?["start"] as? String == "2026-01-01T00:00:00Z")
            let actor = try #require((provision["actor"] as? [[String: Any]])?.first)
            let reference = try #require(actor["reference"] as? [String: Any])
            #expect(reference["display"] as? String == "Consent Analytics S.r.l.")
            #expect(((actor["role"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String == "IRCP")
            let purposes = provision["purpose"] as? [[String: Any]] ?? []
            #expect(purposes.first?["system"] as? String == "http://terminology.hl7.org/CodeSystem/v3-ActReason")
            #expect(purposes.first?["code"] as? String == "HRESCH")
            #expect(purposes.last?["display"] as? String == "Cardiology study")
            // FHIR has no nulls: an absent value is an absent key.
            #expect(!text.contains("null"))

            #expect(try await harness.request(.delete, "/v1/single-requests/\(id)/subscription", token: parties.company).status == .ok)
            let ended = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)/consent", token: parties.person))
            #expect(ended["status"] as? String == "inactive")
            #expect(((ended["provision"] as? [String: Any])?["period"] as? [String: Any])?["end"] != nil)
        }
    }

    @Test("the FHIR Consent of a grant narrowed in every way says what its signed receipt says: types, window, purpose, period")
    func consentSaysWhatTheReceiptSays() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties(companyName: "Same Terms S.p.A.")
            let id = try await harness.sentRequestID(
                parties, types: ["heart_rate", "step_count", "weight"], subscriptionDays: 30,
                window: .init(from: "2026-01-01T00:00:00Z", to: "2026-06-30T00:00:00Z"))
            // The person narrows everything the request asked: two of three types, a shorter window, 10 of 30 days.
            let accepted = try await harness.request(
                .post, "/v1/single-requests/\(id)/accept",
                json:
                    #"{"types":["weight","heart_rate"],"window":{"from":"2026-02-01T00:00:00Z","to":"2026-05-01T00:00:00Z"},"subscription":{"days":10}}"#,
                token: parties.person)
            try #require(accepted.status == .ok, "\(harness.text(accepted))")

            func compare(_ token: String) async throws {
                let receipt = try #require(try await Self.receipts(harness, request: id, token: token).last?["receipt"] as? String)
                let claims = try Self.claims(of: receipt)
                let consent = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)/consent", token: token))
                let provision = try #require(consent["provision"] as? [String: Any])
                // Types: the same set, in the same order.
                let codes = (provision["code"] as? [[String: Any]] ?? []).compactMap { ($0["coding"] as? [[String: Any]])?.first?["code"] as? String }
                #expect(codes == claims["types"] as? [String])
                #expect(Set(codes) == ["heart_rate", "weight"])
                // The window: the granted one, not the asked one.
                let window = try #require(claims["window"] as? [String: Any])
                let dataPeriod = try #require(provision["dataPeriod"] as? [String: Any])
                #expect(TestHarness.date(dataPeriod["start"]) == TestHarness.date(window["from"]))
                #expect(TestHarness.date(dataPeriod["end"]) == TestHarness.date(window["to"]))
                #expect(TestHarness.date(window["from"]) == TestHarness.date("2026-02-01T00:00:00Z"))
                // The purpose: coded, then in the company's words.
                let purposes = provision["purpose"] as? [[String: Any]] ?? []
                #expect(purposes.first?["code"] as? String == claims["purposeCode"] as? String)
                #expect(purposes.last?["display"] as? String == claims["purpose"] as? String)
                // The period: from the grant for the granted number of days.
                let period = try #require(provision["period"] as? [String: Any])
                let granted = try #require(TestHarness.date(claims["statusAt"]))
                let days = try #require(claims["subscriptionDays"] as? Int)
                #expect(days == 10)
                #expect(TestHarness.date(period["start"]) == granted)
                #expect(TestHarness.date(period["end"]) == granted.addingTimeInterval(Double(days) * 86400))
                // The same grant, company and person.
                let identifiers = consent["identifier"] as? [[String: Any]] ?? []
                #expect(
                    identifiers.first { $0["system"] as? String == FHIRSystems.grant }?["value"] as? String == claims["grantId"] as? String)
                let company = try #require(claims["company"] as? [String: Any])
                let recipient = try #require((provision["actor"] as? [[String: Any]])?.first?["reference"] as? [String: Any])
                #expect((recipient["identifier"] as? [String: Any])?["value"] as? String == company["vatNumber"] as? String)
                #expect(recipient["display"] as? String == company["name"] as? String)
                let patient = (consent["patient"] as? [String: Any])?["identifier"] as? [String: Any]
                #expect(patient?["value"] as? String == claims["subject"] as? String)
                let attached = ((consent["sourceAttachment"] as? [String: Any])?["data"] as? String).flatMap { Data(base64Encoded: $0) }
                #expect(attached == Data(receipt.utf8), "the Consent carries the receipt it says it matches")
            }
            try await compare(parties.company)
            try await compare(parties.person)
        }
    }

    // MARK: Console

    @Test("the console lists the person's receipts and a company's request's, each a download only its two parties get")
    func console() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            let parties = try await harness.requestParties(companyName: "Console Receipts S.p.A.")
            let id = try await harness.acceptedRequestID(parties, subscriptionDays: 3)
            let receipt = try #require(try await Self.receipts(harness, request: id, token: parties.person).first)
            let receiptID = try #require(receipt["id"] as? String)
            let jws = try #require(receipt["receipt"] as? String)

            let person = try await ConsoleBrowser.person(harness, parties)
            let page = try await person.get("/receipts")
            #expect(page.status == .ok)
            let html = harness.text(page)
            #expect(html.contains(#"data-receipt-id="\#(receiptID)""#) && html.contains("Console Receipts S.p.A.") && html.contains("Granted"))
            #expect(html.contains(#"href="/receipts/\#(receiptID)/receipt.jwt""#))
            let download = try await person.get("/receipts/\(receiptID)/receipt.jwt")
            #expect(download.status == .ok && harness.text(download) == jws)
            #expect(download.headers[.contentType] == "application/jose")
            #expect(download.headers[.contentDisposition]?.contains("consent-receipt-\(receiptID).jwt") == true)

            let company = try await ConsoleBrowser.company(harness, parties)
            let requestPage = harness.text(try await company.get("/company/requests/\(id)"))
            #expect(requestPage.contains(#"data-receipt-id="\#(receiptID)""#))
            #expect(!requestPage.contains(parties.personFiscalCode))
            #expect(harness.text(try await company.get("/company")).contains(#"href="/company/requests/\#(id)""#))
            #expect(harness.text(try await company.get("/receipts/\(receiptID)/receipt.jwt")) == jws)

            // Another company, another person: the same 404 as a receipt that does not exist.
            let others = try await harness.requestParties()
            for browser in [try await ConsoleBrowser.company(harness, others), try await ConsoleBrowser.person(harness, others)] {
                let theirs = try await browser.get("/receipts/\(receiptID)/receipt.jwt")
                let unknown = try await browser.get("/receipts/\(UUID().uuidString.lowercased())/receipt.jwt")
                #expect(theirs.status == .notFound && unknown.status == .notFound)
                #expect(harness.text(theirs) == harness.text(unknown) && !harness.text(theirs).contains(jws.prefix(20)))
            }
            #expect(try await ConsoleBrowser.company(harness, others).get("/company/requests/\(id)").status == .notFound)
        }
    }

    // MARK: Erasure and keys

    @Test("an erased person's receipts are no longer linked to them; the company keeps what it received")
    func erasure() async throws {
        try await TestHarness.run(configure: Self.withKey) { harness in
            var person = TestHarness.Person()
            person.fiscalCode = TestHarness.uniqueFiscalCode()
            let personToken = try await harness.activeUser(person)
            let company = try await harness.activeCompany(TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber()))
            let parties = RequestParties(
                company: company, companyID: try await harness.accountID(company), person: personToken,
                personID: try await harness.accountID(personToken), personEmail: person.email, personFiscalCode: person.fiscalCode)
            let id = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
            let erased = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(person.password)"}"#, token: personToken)
            #expect(erased.status == .noContent || erased.status == .ok, "\(harness.text(erased))")
            #expect(try await harness.sql("SELECT 1 FROM consent_receipts WHERE user_id = '\(parties.personID)'").isEmpty)
            let kept = try await Self.receipts(harness, request: id, token: company)
            #expect(kept.map { $0["status"] as? String } == ["granted", "revoked"])
            #expect(try await Self.check(harness, try #require(kept.last?["receipt"] as? String)).valid)
        }
    }

    @Test("a server without CONSENT_SIGNING_KEY_FILE issues no receipt, serves an empty key set, and says so at start")
    func withoutAKey() async throws {
        try await TestHarness.run(configure: { $0.consentSigningKey = nil }) { harness in
            let parties = try await harness.requestParties()
            let id = try await harness.acceptedRequestID(parties)
            #expect(try await Self.receipts(harness, request: id, token: parties.person).isEmpty)
            #expect(harness.text(try await harness.request(.get, "/v1/consent-receipts/keys")) == #"{"keys":[]}"#)
            let forged = try ConsentReceiptJWS.sign(
                ConsentReceiptClaims(
                    iss: Self.issuer, iat: 1, jti: UUID().uuidString.lowercased(), requestId: id, grantId: UUID().uuidString.lowercased(),
                    company: .init(id: parties.companyID, name: "X", vatNumber: "1"), subject: "s_" + String(repeating: "0", count: 32),
                    status: .granted, statusAt: "2026-03-01T00:00:00Z", types: ["heart_rate"], window: .init(), purpose: "p", purposeCode: "TREAT"),
                with: ConsentSigningKey.generate())
            #expect(try await Self.check(harness, forged).valid == false)
        }
    }
}
