import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@Suite("Audit log")
struct AuditLogTests {
    /// (seq, action, actor role, actor id, subject), in order.
    private func events(_ harness: TestHarness) async throws -> [(Int64, String, String, String?, String?)] {
        try await harness.sql("SELECT seq, action, actor_role, actor_id, subject FROM audit_events ORDER BY seq")
            .map { try $0.decode((Int64, String, String, String?, String?).self) }
    }

    /// Numbered from 1 with no gap, and the head row agrees with the last event.
    private func expectConsecutive(_ harness: TestHarness, count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let seqs = try await events(harness).map(\.0)
        #expect(seqs == (0..<count).map { Int64($0 + 1) }, sourceLocation: sourceLocation)
        #expect(
            try await harness.bool(
                "SELECT h.seq = e.seq AND h.hash = e.hash FROM audit_chain_head h, (SELECT * FROM audit_events ORDER BY seq DESC LIMIT 1) e"),
            sourceLocation: sourceLocation)
    }

    @Test("registering and activating record account.created then account.activated under one pseudonym")
    func registrationAndActivation() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            #expect(try await harness.request(.post, "/v1/users", json: person.registrationJSON).status == .accepted)
            try await harness.activate(email: person.email)
            let log = try await events(harness)
            try #require(log.count == 2)
            #expect(log[0].1 == "account.created")
            #expect(log[0].2 == "user")
            #expect(log[1].1 == "account.activated")
            let subject = try #require(log[0].4)
            #expect(subject.hasPrefix("p_"))
            #expect(subject.count > 10)
            #expect(log[1].4 == subject)
            // A person acts under their pseudonym, never their account id.
            #expect(log[0].3 == subject)
            let accountID = try await harness.sql("SELECT id::text FROM accounts").first?.decode(String.self)
            #expect(accountID != nil && !subject.contains(accountID!))
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid))
            try await expectConsecutive(harness, count: 2)
        }
    }

    @Test("two people get different pseudonyms, and a company is recorded by its account id")
    func pseudonymsPerAccount() async throws {
        try await TestHarness.run { harness in
            try await harness.activeUser()
            try await harness.activeUser(TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode()))
            try await harness.activeCompany()
            let created = try await events(harness).filter { $0.1 == "account.created" }
            try #require(created.count == 3)
            #expect(created[0].4 != created[1].4)
            #expect(created[2].2 == "third_party")
            let companyID = try await harness.sql("SELECT id::text FROM accounts WHERE role = 'third_party'").first?.decode(String.self)
            #expect(created[2].3 == companyID)
        }
    }

    @Test("password changes, API keys and erasure are recorded in order, and the chain stays valid")
    func laterActions() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let userToken = try await harness.activeUser(person)
            let change = try await harness.request(
                .patch, "/v1/me", json: #"{"currentPassword":"\#(person.password)","newPassword":"a-brand-new-password"}"#,
                token: userToken)
            #expect(change.status == .ok)
            let company = TestHarness.Company()
            let companyToken = try await harness.activeCompany(company)
            let key = try harness.object(try await harness.request(.post, "/v1/api-keys", json: "{}", token: companyToken))
            let keyID = try #require(key["id"] as? String)
            #expect(try await harness.request(.delete, "/v1/api-keys/\(keyID)", token: companyToken).status == .noContent)
            let erase = try await harness.request(.delete, "/v1/me", json: #"{"password":"a-brand-new-password"}"#, token: userToken)
            #expect(erase.status == .noContent)

            let log = try await events(harness)
            #expect(
                log.map(\.1) == [
                    "account.created", "account.activated", "account.password_changed",
                    "account.created", "account.activated", "api_key.created", "api_key.revoked", "account.erased",
                ])
            let personPseudonym = log[0].4
            #expect(log[2].4 == personPseudonym)
            #expect(log[7].4 == personPseudonym)
            let keyDetails = try await harness.sql(
                "SELECT details->>'keyId' FROM audit_events WHERE action LIKE 'api_key.%' ORDER BY seq"
            )
            .map { try $0.decode(String?.self) }
            #expect(keyDetails == [keyID, keyID])
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid))
            try await expectConsecutive(harness, count: 8)
        }
    }

    @Test("a failed registration or login writes nothing to the audit log")
    func failuresAreNotRecorded() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            _ = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            _ = try await harness.request(.post, "/v1/users", json: #"{"email":"bad"}"#)
            _ = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"wrong-password"}"#)
            #expect(try await harness.int("SELECT count(*) FROM audit_events") == 2)
        }
    }

    @Test(
        "changing any recorded field of an event breaks the chain",
        arguments: [
            "details = '{\"role\": \"auditor\"}'::jsonb", "action = 'account.erased'", "subject = 'p_0000'",
            "at = at + interval '1 millisecond'", "actor_role = 'operator'",
        ])
    func tamperingIsDetected(change: String) async throws {
        try await TestHarness.run { harness in
            try await harness.activeUser()
            try await harness.activeCompany()
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid))
            // The log refuses changes (0012); its owner can switch that off, which is the attack here.
            _ = try await harness.sql("ALTER TABLE audit_events DISABLE TRIGGER USER")
            _ = try await harness.sql("UPDATE audit_events SET \(change) WHERE seq = 2")
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid) == false)
        }
    }

    @Test("removing an event breaks the chain")
    func deletionIsDetected() async throws {
        try await TestHarness.run { harness in
            try await harness.activeUser()
            try await harness.activeCompany()
            _ = try await harness.sql("ALTER TABLE audit_events DISABLE TRIGGER USER")
            _ = try await harness.sql("DELETE FROM audit_events WHERE seq = 2")
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid) == false)
        }
    }

    @Test("concurrent registrations leave one valid chain numbered without gaps")
    func concurrentRegistrations() async throws {
        try await TestHarness.run { harness in
            let people = (0..<8).map { index in
                TestHarness.Person(
                    email: "person\(index).\(UUID().uuidString.prefix(6).lowercased())@example.com",
                    fiscalCode: TestHarness.uniqueFiscalCode())
            }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for person in people {
                    group.addTask {
                        try await harness.requestOnNewConnection(.post, "/v1/users", json: person.registrationJSON).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: .accepted, count: 8))
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'account.created'") == 8)
            #expect(try await harness.int("SELECT count(DISTINCT subject) FROM audit_events") == 8)
            #expect(try await harness.bool(ConsistencyChecks.chainIsValid))
            try await expectConsecutive(harness, count: 8)
            #expect(try await harness.mails().count == 8)
        }
    }
}
