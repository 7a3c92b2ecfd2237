import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Issue 17, item 4: registration must not tell anyone whether an email, a fiscal code or a VAT number
/// is registered. Only the public API.
@Suite("Registration is not an oracle")
struct RegistrationOracleTests {
    /// Status, headers (but the ones that differ on every response) and body, as one comparable text.
    private func answer(_ response: TestResponse, replacing: (String, String)? = nil) -> String {
        let headers = response.headers
            .filter { ![.date, HTTPField.Name("X-Request-Id")!].contains($0.name) }
            .map { "\($0.name.canonicalName): \($0.value)" }
            .sorted()
        var body = String(buffer: response.body)
        if let (from, to) = replacing { body = body.replacingOccurrences(of: from, with: to) }
        return "\(response.status.code)\n\(headers.joined(separator: "\n"))\n\n\(body)"
    }

    /// Registers and activates the owner, then registers the prober at the same `path`. Returns the two answers
    /// as `answer` writes them, the owner's with its email replaced by the prober's (a receipt may name the
    /// address it was sent for): an oracle is any difference between the two.
    private func ownerThenProber(
        _ harness: TestHarness, at path: String, owner: (json: String, email: String), prober: (json: String, email: String)
    ) async throws -> (fresh: String, taken: String) {
        let fresh = try await harness.request(.post, path, json: owner.json)
        try await harness.activate(email: owner.email)
        let taken = try await harness.request(.post, path, json: prober.json)
        return (answer(fresh, replacing: owner.email == prober.email ? nil : (owner.email, prober.email)), answer(taken))
    }

    private func mailTo(_ harness: TestHarness, _ email: String) async throws -> [String] {
        try await harness.mails().filter { $0.contains("To: <\(email.lowercased())>") }
    }

    @Test("a taken email answers byte for byte like a new registration; the owner is told, nothing is created")
    func takenEmail() async throws {
        try await TestHarness.run { harness in
            let owner = TestHarness.Person()
            let attacker = TestHarness.Person(
                email: owner.email, password: "attacker-password-1", fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Someone Else")
            let answers = try await ownerThenProber(
                harness, at: "/v1/users", owner: (owner.registrationJSON, owner.email), prober: (attacker.registrationJSON, attacker.email))
            #expect(answers.taken == answers.fresh)
            #expect(answers.taken.hasPrefix("202\n"))
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            #expect(try await harness.int("SELECT count(*) FROM users WHERE fiscal_code = '\(attacker.fiscalCode)'") == 0)
            let notice = try #require(try await mailTo(harness, owner.email).last)
            #expect(notice.contains("Someone tried to register"), "\(notice)")
            #expect(!notice.contains("Activation token:"))
            // The owner's account is untouched: the attacker's password does not log in.
            _ = try await harness.logIn(email: owner.email, password: owner.password)
        }
    }

    @Test("a taken fiscal code with a new email answers like a new registration; its holder is told, nothing is created")
    func takenFiscalCode() async throws {
        try await TestHarness.run { harness in
            let owner = TestHarness.Person()
            let prober = TestHarness.Person(fiscalCode: owner.fiscalCode.lowercased(), fullName: "Laura Bianchi Bis")
            let answers = try await ownerThenProber(
                harness, at: "/v1/users", owner: (owner.registrationJSON, owner.email), prober: (prober.registrationJSON, prober.email))
            #expect(answers.taken == answers.fresh)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(prober.email)'") == 0)
            #expect(try await mailTo(harness, prober.email).isEmpty, "no activation mail for an account that was not created")
            #expect(try await mailTo(harness, owner.email).last?.contains("with your fiscal code") == true)
        }
    }

    @Test("a taken VAT number answers like a new company registration; its holder is told, nothing is created")
    func takenVATNumber() async throws {
        try await TestHarness.run { harness in
            let owner = TestHarness.Company()
            let prober = TestHarness.Company(companyName: "Another Company S.r.l.")
            let answers = try await ownerThenProber(
                harness, at: "/v1/third-parties", owner: (owner.registrationJSON, owner.email),
                prober: (prober.registrationJSON, prober.email))
            #expect(answers.taken == answers.fresh)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            #expect(try await mailTo(harness, owner.email).last?.contains("VAT number") == true)
        }
    }

    @Test("registering again with the email of an account never activated replaces it and mails a new link")
    func takenByAnUnactivatedOwner() async throws {
        try await TestHarness.run { harness in
            let owner = TestHarness.Person()
            let fresh = try await harness.request(.post, "/v1/users", json: owner.registrationJSON)
            let firstToken = try #require(try await harness.activationToken(for: owner.email))
            let again = try await harness.request(.post, "/v1/users", json: owner.registrationJSON)
            #expect(answer(again) == answer(fresh))
            let secondToken = try #require(try await harness.activationToken(for: owner.email))
            #expect(secondToken != firstToken)
            // A registration that replaced another asks for its password at activation (PreHijackingTests).
            try await harness.activate(email: owner.email, password: owner.password)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
        }
    }

    @Test("repeated registrations with a taken email do not flood its owner's mailbox")
    func noticesAreSpaced() async throws {
        try await TestHarness.run { harness in
            let owner = TestHarness.Person()
            try await harness.activeUser(owner)
            let before = try await mailTo(harness, owner.email).count
            for attempt in 1...4 {  // one notice, then the 5-minute cooldown
                let attacker = TestHarness.Person(
                    email: owner.email, fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Someone Else \(attempt)")
                #expect(try await harness.request(.post, "/v1/users", json: attacker.registrationJSON).status == .accepted)
            }
            #expect(try await mailTo(harness, owner.email).count <= before + 1)
        }
    }
}
