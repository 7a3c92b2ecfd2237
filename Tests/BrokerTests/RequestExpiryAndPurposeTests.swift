import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// Issue 29, items 2 and 6, as a company would try to get around them: an expiry it chooses (in the past,
/// too far ahead, hiding a refusal longer than allowed) and a purpose code it leaves out or makes up.
@Suite("Request expiry and purpose codes", .serialized)
struct RequestExpiryAndPurposeTests {
    /// Whole seconds from now, as a company would write it.
    static func fromNow(_ seconds: TimeInterval) -> Date {
        Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + seconds).rounded(.down))
    }

    /// `POST /v1/single-requests` naming the subject by fiscal code, with the optional fields as given.
    static func send(
        _ harness: TestHarness, _ token: String, fiscalCode: String, purposeCode: String? = "HRESCH", expiresAt: String? = nil
    ) async throws -> TestResponse {
        let code = purposeCode.map { #","purposeCode":"\#($0)""# } ?? ""
        let expiry = expiresAt.map { #","expiresAt":"\#($0)""# } ?? ""
        return try await harness.request(
            .post, "/v1/single-requests",
            json: #"{"subject":{"fiscalCode":"\#(fiscalCode)"},"types":["heart_rate"],"purpose":"Cardiology study"\#(code)\#(expiry)}"#,
            token: token)
    }

    /// A request as its sender reads it, less what differs between any two requests (id, creation, the
    /// subject as typed); `expiresAt` stays, so two requests given the same one must read alike.
    static func shape(_ object: [String: Any]) throws -> String {
        var object = object
        for key in ["id", "createdAt", "subject"] { object.removeValue(forKey: key) }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    // MARK: Item 2: expiry chosen by the company

    @Test("expiresAt: the company's choice is stored and read by both sides; absent, PENDING_REQUEST_EXPIRY_DAYS from now")
    func chosenAndDefaultExpiry() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let chosen = Self.fromNow(3 * 86_400)
            let sent = try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode, expiresAt: Timestamp.rfc3339(chosen))
            #expect(sent.status == .created, "\(harness.text(sent))")
            let id = try #require(try harness.object(sent)["id"] as? String)
            #expect((try harness.object(sent)["expiresAt"] as? String).flatMap(Timestamp.parse) == chosen)
            for token in [parties.company, parties.person] {
                let read = try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: token))
                #expect((read["expiresAt"] as? String).flatMap(Timestamp.parse) == chosen)
            }
            #expect(
                try await harness.int("SELECT extract(epoch FROM expires_at)::bigint FROM single_requests WHERE id = '\(id)'")
                    == Int(chosen.timeIntervalSince1970))
            #expect(
                try await harness.int(
                    """
                    SELECT count(*) FROM audit_events WHERE request_id = '\(id)' AND action = 'single_request.created'
                      AND details->>'expiresAt' = '\(Timestamp.rfc3339(chosen))'
                    """) == 1)

            let unchosen = try await Self.send(harness, parties.company, fiscalCode: TestHarness.uniqueFiscalCode())
            let object = try harness.object(unchosen)
            let created = try #require((object["createdAt"] as? String).flatMap(Timestamp.parse))
            let expires = try #require((object["expiresAt"] as? String).flatMap(Timestamp.parse))
            #expect(abs(expires.timeIntervalSince(created) - 30 * 86_400) < 1)
        }
    }

    @Test("expiresAt in the past, within the hour, beyond 90 days or no time at all: 422 naming expiresAt, nothing stored")
    func expiryBounds() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let wrong = [
                Timestamp.rfc3339(Self.fromNow(-60)), Timestamp.rfc3339(Self.fromNow(10 * 60)),
                Timestamp.rfc3339(Self.fromNow(90 * 86_400 + 3600)), Timestamp.rfc3339(Self.fromNow(3650 * 86_400)), "tomorrow",
                "2026-13-01T00:00:00Z",
            ]
            for text in wrong {
                let answer = try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode, expiresAt: text)
                #expect(answer.status == .unprocessableContent, "\(text): \(harness.text(answer))")
                #expect(try harness.errorFields(answer) == ["expiresAt"], "\(text)")
            }
            #expect(try await harness.int("SELECT count(*) FROM single_requests WHERE third_party_id = '\(parties.companyID)'") == 0)
            // Both ends of the range are allowed.
            let latest = Self.fromNow(90 * 86_400 - 60)
            let late = try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode, expiresAt: Timestamp.rfc3339(latest))
            #expect(late.status == .created, "\(harness.text(late))")
            let soonest = Self.fromNow(3600 + 60)
            let soon = try await Self.send(
                harness, parties.company, fiscalCode: TestHarness.uniqueFiscalCode(), expiresAt: Timestamp.rfc3339(soonest))
            #expect(soon.status == .created, "\(harness.text(soon))")
        }
    }

    @Test("PENDING_REQUEST_EXPIRY_DAYS is capped at 90 days, as a company's own choice is")
    func defaultExpiryCap() throws {
        func days(_ environment: [String: String]) throws -> Int {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)).pendingRequestExpiryDays
        }
        #expect(try days(["PENDING_REQUEST_EXPIRY_DAYS": "90"]) == 90)
        for wrong in ["91", "365"] {
            #expect(throws: ConfigurationError.self) { try days(["PENDING_REQUEST_EXPIRY_DAYS": wrong]) }
        }
    }

    @Test("with a chosen expiresAt a refusal reads pending to the company until then, then expired: byte for byte a request to nobody")
    func refusalHiddenUntilChosenExpiry() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.sql(
                "INSERT INTO webhooks (third_party_id, url, secret) VALUES ('\(parties.companyID)', 'https://hooks.example.com/d4h', 's')")
            var other = TestHarness.Person()
            other.fiscalCode = TestHarness.uniqueFiscalCode()
            let otherToken = try await harness.activeUser(other)
            let chosen = Timestamp.rfc3339(Self.fromNow(2 * 86_400))
            func send(_ fiscalCode: String) async throws -> String {
                let sent = try await Self.send(harness, parties.company, fiscalCode: fiscalCode, expiresAt: chosen)
                try #require(sent.status == .created, "\(harness.text(sent))")
                return try #require(try harness.object(sent)["id"] as? String)
            }
            let refused = try await send(parties.personFiscalCode)
            let toNobody = try await send(TestHarness.uniqueFiscalCode())
            let unanswered = try await send(other.fiscalCode)
            #expect(try await harness.request(.post, "/v1/single-requests/\(refused)/refuse", token: parties.person).status == .ok)
            func read(_ id: String, _ token: String) async throws -> [String: Any] {
                try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: token))
            }
            // Before the chosen time: pending, alike, with the chosen expiry.
            let pending = try Self.shape(try await read(toNobody, parties.company))
            #expect(pending.contains(#""status":"pending""#))
            #expect(try Self.shape(try await read(refused, parties.company)) == pending)
            #expect((try await read(refused, parties.company)["expiresAt"] as? String).flatMap(Timestamp.parse) == Timestamp.parse(chosen))
            #expect(try await read(refused, parties.person)["status"] as? String == "refused")
            // The chosen time is what the database judges expiry by.
            #expect(
                try await harness.int(
                    "SELECT count(DISTINCT expires_at) FROM single_requests WHERE id IN ('\(refused)', '\(toNobody)', '\(unanswered)')") == 1)
            #expect(
                try await harness.int("SELECT extract(epoch FROM expires_at)::bigint FROM single_requests WHERE id = '\(refused)'")
                    == Int(Timestamp.parse(chosen)!.timeIntervalSince1970))

            // The chosen time passes (moved back together, so the three still share one expiry).
            try await harness.sql(
                """
                UPDATE single_requests SET expires_at = now() - interval '1 second'
                WHERE id IN ('\(refused)', '\(toNobody)', '\(unanswered)')
                """)
            let expired = try Self.shape(try await read(toNobody, parties.company))
            #expect(expired.contains(#""status":"expired""#))
            #expect(try Self.shape(try await read(refused, parties.company)) == expired)
            #expect(try await read(refused, parties.person)["status"] as? String == "refused")
            #expect(try await read(unanswered, otherToken)["status"] as? String == "expired")
            #expect(try await read(unanswered, parties.company)["status"] as? String == "expired")
            #expect(try await harness.request(.post, "/v1/single-requests/\(unanswered)/accept", token: otherToken).status == .conflict)
            // No webhook tells a refusal, nor an expiry, from a request to nobody.
            #expect(try await harness.int("SELECT count(*) FROM webhook_events WHERE third_party_id = '\(parties.companyID)'") == 0)
        }
    }

    // MARK: Item 6: coded purposes

    @Test("purposeCode missing, empty or outside the value set: 422 naming purposeCode, on single and group requests, nothing stored")
    func purposeCodeRequired() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            for code in [nil, "", "hresch", "RESEARCH", "TREAT "] as [String?] {
                let answer = try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode, purposeCode: code)
                #expect(answer.status == .unprocessableContent, "\(String(describing: code)): \(harness.text(answer))")
                #expect(try harness.errorFields(answer) == ["purposeCode"], "\(String(describing: code))")
                let group = try await harness.request(
                    .post, "/v1/group-requests",
                    json:
                        #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-01"},"bucket":"day","purpose":"x"\#(code.map { #","purposeCode":"\#($0)""# } ?? "")}"#,
                    token: parties.company)
                #expect(group.status == .unprocessableContent, "\(String(describing: code)): \(harness.text(group))")
                #expect(try harness.errorFields(group) == ["purposeCode"], "\(String(describing: code))")
            }
            #expect(try await harness.int("SELECT count(*) FROM single_requests WHERE third_party_id = '\(parties.companyID)'") == 0)
            #expect(try await harness.int("SELECT count(*) FROM group_requests WHERE third_party_id = '\(parties.companyID)'") == 0)
            #expect(try await harness.int("SELECT count(*) FROM privacy_ledger WHERE company_id = '\(parties.companyID)'") == 0)
        }
    }

    @Test("purposeCode round trip: both sides of a single request, a group request, the auditors' list, and the audit events")
    func purposeCodeRoundTrip() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let sent = try await Self.send(harness, parties.company, fiscalCode: parties.personFiscalCode, purposeCode: "TREAT")
            #expect(sent.status == .created, "\(harness.text(sent))")
            let id = try #require(try harness.object(sent)["id"] as? String)
            #expect(try harness.object(sent)["purposeCode"] as? String == "TREAT")
            for token in [parties.company, parties.person] {
                #expect(
                    try harness.object(try await harness.request(.get, "/v1/single-requests/\(id)", token: token))["purposeCode"] as? String
                        == "TREAT")
                let list = try harness.object(try await harness.request(.get, "/v1/single-requests", token: token))
                #expect((list["items"] as? [[String: Any]])?.first?["purposeCode"] as? String == "TREAT")
            }
            #expect(
                try await harness.int(
                    """
                    SELECT count(*) FROM audit_events WHERE request_id = '\(id)' AND action = 'single_request.created'
                      AND details->>'purposeCode' = 'TREAT'
                    """) == 1)

            let group = try await harness.request(
                .post, "/v1/group-requests",
                json:
                    #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-01"},"bucket":"day","purpose":"Flu season","purposeCode":"PUBHLTH"}"#,
                token: parties.company)
            #expect(group.status == .created, "\(harness.text(group))")
            let groupID = try #require(try harness.object(group)["id"] as? String)
            #expect(try harness.object(group)["purposeCode"] as? String == "PUBHLTH")
            let read = try harness.object(try await harness.request(.get, "/v1/group-requests/\(groupID)", token: parties.company))
            #expect(read["purposeCode"] as? String == "PUBHLTH")
            let auditor = try await harness.activeAuditor()
            let audited = try harness.object(try await harness.request(.get, "/v1/audit/group-requests", token: auditor))
            let item = (audited["items"] as? [[String: Any]])?.first { $0["id"] as? String == groupID }
            #expect(item?["purposeCode"] as? String == "PUBHLTH")
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM audit_events WHERE request_id = '\(groupID)' AND details->>'purposeCode' = 'PUBHLTH'") == 1)
        }
    }

    @Test("requests stored before codes existed read HRESCH once migrated, and a new row must name its code")
    func migrationGivesOldRowsACode() async throws {
        let bundled = try Migration.bundled()
        try await TestDatabase.withEmptyDatabase { url in
            try await TestDatabase.withClient(url) { client in
                let logger = TestDatabase.logger
                _ = try await Migrator(client: client, migrations: bundled.filter { $0.version < 24 }, logger: logger).migrate()
                let company = UUID()
                try await client.query(
                    "INSERT INTO accounts (id, role, email) VALUES (\(company), 'third_party', 'company@example.org')", logger: logger)
                try await client.query(
                    """
                    INSERT INTO single_requests (third_party_id, subject_email, types, asked_types, purpose, expires_at)
                    VALUES (\(company), 'someone@example.org', '{1}', '{1}', 'Before', now() + interval '1 day')
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO group_requests (third_party_id, types, window_from, window_to, bucket, purpose, status)
                    VALUES (\(company), '{1}', '2026-03-01', '2026-03-01', 'day', 'Before', 'refused')
                    """, logger: logger)
                _ = try await Migrator(client: client, migrations: bundled, logger: logger).migrate()
                for table in ["single_requests", "group_requests"] {
                    let codes = try await client.query("SELECT purpose_code FROM \(unescaped: table)", logger: logger).collect()
                        .map { try $0.decode(String.self) }
                    #expect(codes == ["HRESCH"], "\(table)")
                }
                await #expect(throws: (any Error).self) {
                    try await client.query(
                        """
                        INSERT INTO single_requests (third_party_id, subject_email, types, asked_types, purpose, expires_at)
                        VALUES (\(company), 'other@example.org', '{1}', '{1}', 'After', now() + interval '1 day')
                        """, logger: logger)
                }
                await #expect(throws: (any Error).self) {
                    try await client.query(
                        """
                        INSERT INTO single_requests (third_party_id, subject_email, types, asked_types, purpose, expires_at, purpose_code)
                        VALUES (\(company), 'other@example.org', '{1}', '{1}', 'After', now() + interval '1 day', 'RESEARCH')
                        """, logger: logger)
                }
            }
        }
    }

    // MARK: The console

    @Test("console: the company's forms take a purpose and an answer-by day; the inbox shows the purpose in plain words")
    func console() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let company = try await ConsoleBrowser.company(harness, parties)
            try await company.get("/company/requests/new")
            #expect(company.lastPage.contains(#"name="purposeCode""#))
            #expect(company.lastPage.contains(#"name="expiresOn""#))
            let fields = [("subjectEmail", parties.personEmail), ("types", "heart_rate"), ("purpose", "Blood pressure follow-up")]
            let uncoded = try await company.post("/company/requests/new", fields)
            #expect(uncoded.status == .unprocessableContent)
            #expect(company.lastPage.contains(#"id="purposeCode-error""#))
            let tooLate = try await company.post(
                "/company/requests/new", fields + [("purposeCode", "PUBHLTH"), ("expiresOn", CalendarDate.today.adding(days: 120).description)])
            #expect(tooLate.status == .unprocessableContent)
            #expect(company.lastPage.contains(#"id="expiresOn-error""#))
            #expect(try await harness.int("SELECT count(*) FROM single_requests WHERE third_party_id = '\(parties.companyID)'") == 0)

            let answerBy = CalendarDate.today.adding(days: 10)
            let sent = try await company.post("/company/requests/new", fields + [("purposeCode", "PUBHLTH"), ("expiresOn", answerBy.description)])
            #expect(sent.status == .seeOther, "\(company.lastPage)")
            let rows = try await harness.sql(
                "SELECT purpose_code, extract(epoch FROM expires_at)::bigint FROM single_requests WHERE third_party_id = '\(parties.companyID)'")
            let row = try #require(rows.first).decode((String, Int).self)
            #expect(row.0 == "PUBHLTH")
            // Through the whole day chosen (UTC): it expires as the next one starts.
            #expect(row.1 == answerBy.adding(days: 1).dayNumber * 86_400)

            let person = try await ConsoleBrowser.person(harness, parties)
            #expect(person.lastPage.contains(PurposeOfUse.publicHealth.plainWords))
            #expect(person.lastPage.contains("Blood pressure follow-up"))

            try await company.get("/company/group-requests/new")
            #expect(company.lastPage.contains(#"name="purposeCode""#))
            let group = [
                ("purpose", "Study"), ("types", "heart_rate"), ("sex", "F"), ("windowFrom", "2026-03-01"), ("windowTo", "2026-03-01"),
                ("bucket", "day"),
            ]
            #expect(try await company.post("/company/group-requests/new", group).status == .unprocessableContent)
            #expect(company.lastPage.contains(#"id="purposeCode-error""#))
            #expect(try await company.post("/company/group-requests/new", group + [("purposeCode", "CLINTRCH")]).status == .seeOther)
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM group_requests WHERE purpose_code = 'CLINTRCH' AND third_party_id = '\(parties.companyID)'") == 1)
        }
    }
}
