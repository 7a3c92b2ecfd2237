import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 27, item 7: an account must not be pre-hijacked (Sudhodanan and Paverd, USENIX Security 2022). A
/// squatter registers a victim's email first, with their own password and identity, and never activates;
/// the victim registers and follows the activation mail they receive. That must activate the victim's
/// registration, never the squatter's. The rule: the newest registration of an address that is not yet
/// active replaces the pending one (password, identity, every earlier link); a registration that replaced
/// another is activated only with the password it was registered with. Only the same email replaces: a
/// pending account keeps its fiscal code or VAT number against other emails (the fiscal-code detour).
@Suite("Account pre-hijacking")
struct PreHijackingTests {
    private func mailsTo(_ harness: TestHarness, _ email: String) async throws -> [String] {
        try await harness.mails().filter { $0.contains("To: <\(email.lowercased())>") }
    }

    private func activation(_ harness: TestHarness, token: String, password: String? = nil) async throws -> TestResponse {
        let password = password.map { #","password":"\#($0)""# } ?? ""
        return try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"\#(password)}"#)
    }

    /// Moves the last unsolicited mail of the address's account out of the mail cooldown (5 minutes).
    private func passCooldown(_ harness: TestHarness, _ email: String) async throws {
        _ = try await harness.sql(
            "UPDATE accounts SET account_mail_sent_at = now() - interval '6 minutes' WHERE email = '\(email.lowercased())'")
    }

    @Test("a squatter who registered the victim's email first does not get the account: the victim's password works, theirs is refused")
    func squatterFirst() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            let squatter = TestHarness.Person(
                email: victim.email, password: "squatter-password-1", fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Mallory Squatter")
            let first = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let second = try await harness.request(.post, "/v1/users", json: victim.registrationJSON)
            #expect(second.status == .accepted)
            #expect(String(buffer: second.body) == String(buffer: first.body), "the replacing registration answers like a new one")
            let mail = try #require(try await mailsTo(harness, victim.email).last)
            #expect(mail.contains("asks for the password"), "\(mail)")
            try await harness.activate(email: victim.email, password: victim.password)
            let session = try await harness.logIn(email: victim.email, password: victim.password)
            let refused = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(victim.email)","password":"\#(squatter.password)"}"#)
            #expect(refused.status == .unauthorized)
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: session))
            #expect(me["fiscalCode"] as? String == victim.fiscalCode)
            #expect(me["fullName"] as? String == victim.fullName)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            #expect(try await harness.int("SELECT count(*) FROM users WHERE fiscal_code = '\(squatter.fiscalCode)'") == 0)
        }
    }

    @Test("the squatter's earlier links stop working once the victim registers, even inside the mail cooldown")
    func squattersLinksDie() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            let squatter = TestHarness.Person(
                email: victim.email, password: "squatter-password-1", fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Mallory Squatter")
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let firstLink = try #require(try await harness.activationToken(for: victim.email))
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let secondLink = try #require(try await harness.activationToken(for: victim.email))
            #expect(secondLink != firstLink)
            // The second registration's mail started the cooldown: the victim's registration sends none.
            let mailsBefore = try await mailsTo(harness, victim.email).count
            #expect(try await harness.request(.post, "/v1/users", json: victim.registrationJSON).status == .accepted)
            #expect(try await mailsTo(harness, victim.email).count == mailsBefore)
            for link in [firstLink, secondLink] {
                for password in [nil, squatter.password, victim.password] {
                    let response = try await activation(harness, token: link, password: password)
                    #expect(response.status == .notFound, "a link of the replaced registration answered \(response.status)")
                }
            }
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'active'") == 0)
            // After the cooldown the owner asks for the mail again; its link activates their registration.
            try await passCooldown(harness, victim.email)
            #expect(
                try await harness.request(.post, "/v1/accounts/activation-mail", json: #"{"email":"\#(victim.email)"}"#).status == .accepted)
            try await harness.activate(email: victim.email, password: victim.password)
            _ = try await harness.logIn(email: victim.email, password: victim.password)
        }
    }

    @Test("a squatter registering after the victim: the victim's link dies, and the squatter's cannot be activated without their password")
    func squatterSecond() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            let squatter = TestHarness.Person(
                email: victim.email, password: "squatter-password-1", fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Mallory Squatter")
            _ = try await harness.request(.post, "/v1/users", json: victim.registrationJSON)
            let victimsLink = try #require(try await harness.activationToken(for: victim.email))
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let squattersLink = try #require(try await harness.activationToken(for: victim.email))
            #expect(squattersLink != victimsLink)
            #expect(try await activation(harness, token: victimsLink).status == .notFound)
            // The owner of the mailbox follows the newest mail, which activates the squatter's registration:
            // it asks for that registration's password, which the owner does not know.
            for password in [nil, victim.password] {
                let response = try await activation(harness, token: squattersLink, password: password)
                #expect(response.status == .unprocessableContent, "activating the squatter's registration answered \(response.status)")
                #expect(try harness.errorFields(response) == ["password"])
            }
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'active'") == 0)
            // The owner registers again and activates their own registration.
            try await passCooldown(harness, victim.email)
            #expect(try await harness.request(.post, "/v1/users", json: victim.registrationJSON).status == .accepted)
            #expect(try await activation(harness, token: squattersLink, password: squatter.password).status == .notFound)
            try await harness.activate(email: victim.email, password: victim.password)
            _ = try await harness.logIn(email: victim.email, password: victim.password)
            let refused = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(victim.email)","password":"\#(squatter.password)"}"#)
            #expect(refused.status == .unauthorized)
        }
    }

    @Test("a pending registration keeps its fiscal code against another email's registration: nothing is deleted, its holder is told")
    func fiscalCodeSquatter() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            let squatter = TestHarness.Person(password: "squatter-password-1", fiscalCode: victim.fiscalCode, fullName: "Mallory Squatter")
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let squattersLink = try #require(try await harness.activationToken(for: squatter.email))
            #expect(try await harness.request(.post, "/v1/users", json: victim.registrationJSON).status == .accepted)
            // Only the same email replaces a pending registration; the owner waits out its 48 hours
            // (IdentitySquattingTests.squatterOfFiscalCodeExpires).
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(victim.email)'") == 0)
            #expect(try await harness.activationToken(for: victim.email) == nil)
            #expect(try await mailsTo(harness, squatter.email).last?.contains("Someone tried to register") == true)
            #expect(try await activation(harness, token: squattersLink).status == .ok)
        }
    }

    @Test("a pending registration keeps its VAT number against another email's registration")
    func vatNumberSquatter() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let squatter = TestHarness.Company(password: "squatter-password-1", vatNumber: company.vatNumber, companyName: "Squatter S.r.l.")
            _ = try await harness.request(.post, "/v1/third-parties", json: squatter.registrationJSON)
            #expect(try await harness.request(.post, "/v1/third-parties", json: company.registrationJSON).status == .accepted)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(company.email)'") == 0)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(squatter.email)'") == 1)
            #expect(try await harness.int("SELECT count(*) FROM third_parties WHERE vat_number = '\(company.vatNumber)'") == 1)
        }
    }

    @Test(
        "the fiscal-code detour: displacing the victim's pending registration by fiscal code cannot make the victim's mail activate the attacker's password"
    )
    func fiscalCodeDetour() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            _ = try await harness.request(.post, "/v1/users", json: victim.registrationJSON)
            // The attacker registers an address of their own with the victim's fiscal code: the victim's
            // pending registration holds it, so it is not deleted and nothing is created.
            let evil = TestHarness.Person(password: "attacker-password-1", fiscalCode: victim.fiscalCode, fullName: "Mallory")
            #expect(try await harness.request(.post, "/v1/users", json: evil.registrationJSON).status == .accepted)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(evil.email)'") == 0)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(victim.email)'") == 1)
            // Then the victim's address and fiscal code with the attacker's password: it replaces the victim's
            // registration of that email, so its activation asks for the password it was made with.
            var hijack = victim
            hijack.password = "attacker-password-1"
            #expect(try await harness.request(.post, "/v1/users", json: hijack.registrationJSON).status == .accepted)
            // Whatever link the victim's mailbox holds, following it without that password activates nothing.
            let links = try await mailsTo(harness, victim.email).compactMap {
                CapturingMailer.activationToken(in: $0.replacingOccurrences(of: "\r\n", with: "\n"))
            }
            for link in links {
                let response = try await activation(harness, token: link)
                #expect(response.status != .ok, "the victim's mail activated an account")
            }
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'active'") == 0)
            let login = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(victim.email)","password":"\#(hijack.password)"}"#)
            #expect(login.status != .created, "the attacker signed in to the victim's address")
        }
    }

    @Test("alternating the victim's address and another with one fiscal code does not mail-bomb the victim")
    func alternatingRegistrationsMailOnlyWithinTheCooldown() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            var attacker = victim
            attacker.password = "attacker-password-1"
            let evil = TestHarness.Person(password: "attacker-password-1", fiscalCode: victim.fiscalCode, fullName: "Mallory")
            for _ in 0..<4 {
                for json in [attacker.registrationJSON, evil.registrationJSON] {
                    let status = try await harness.request(.post, "/v1/users", json: json).status
                    #expect(status == .accepted)
                }
            }
            // The first registration's activation mail, then at most one unsolicited mail per 5 minutes.
            let toVictim = try await mailsTo(harness, victim.email).count
            let toEvil = try await mailsTo(harness, evil.email).count
            #expect(toVictim <= 2)
            #expect(toEvil == 0)
        }
    }

    @Test("two registrations of one new address at once: one account, and its activation asks for its password")
    func concurrentFirstRegistrations() async throws {
        try await TestHarness.run { harness in
            // A few rounds, so that the two really overlap in at least one of them against the old code.
            for round in 0..<3 {
                let first = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
                let second = TestHarness.Person(
                    email: first.email, password: "second-password-\(round)", fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Mallory")
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for person in [first, second] {
                        group.addTask { try await harness.requestOnNewConnection(.post, "/v1/users", json: person.registrationJSON).status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses == [.accepted, .accepted])
                #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(first.email)'") == 1)
                #expect(try await harness.bool("SELECT registration_replaced FROM accounts WHERE email = '\(first.email)'"))
                let link = try #require(try await harness.activationToken(for: first.email))
                let response = try await activation(harness, token: link)
                #expect(response.status == .unprocessableContent, "round \(round): the newest link activated without a password")
                #expect(try harness.errorFields(response) == ["password"])
            }
        }
    }

    @Test("a company's email squatted as a person's registration: the company's registration replaces it, role and all")
    func companyEmailSquattedAsPerson() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let squatter = TestHarness.Person(
                email: company.email, password: "squatter-password-1", fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Mallory Squatter")
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            #expect(try await harness.request(.post, "/v1/third-parties", json: company.registrationJSON).status == .accepted)
            try await harness.activate(email: company.email, password: company.password)
            let login = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(company.email)","password":"\#(company.password)"}"#)
            #expect(login.status == .created)
            #expect(try harness.object(login)["role"] as? String == "third_party")
            #expect(try await harness.int("SELECT count(*) FROM users") == 0)
        }
    }

    @Test("an active account is never replaced: a registration of its email, fiscal code or VAT number changes nothing")
    func activeAccountsAreNotReplaced() async throws {
        try await TestHarness.run { harness in
            let owner = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            try await harness.activeUser(owner)
            let sameEmail = TestHarness.Person(
                email: owner.email, password: "squatter-password-1", fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Mallory Squatter")
            let sameCode = TestHarness.Person(password: "squatter-password-1", fiscalCode: owner.fiscalCode, fullName: "Mallory Squatter")
            for attempt in [sameEmail, sameCode] {
                #expect(try await harness.request(.post, "/v1/users", json: attempt.registrationJSON).status == .accepted)
            }
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            _ = try await harness.logIn(email: owner.email, password: owner.password)
        }
    }
}
