import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Issue 27, item 7: an account must not be pre-hijacked (Sudhodanan and Paverd, USENIX Security 2022). A
/// squatter registers a victim's email first, with their own password and identity, and never activates;
/// the victim registers and follows the activation mail they receive. That must activate the victim's
/// registration, never the squatter's. The rule: the newest registration of an address that is not yet
/// active replaces the pending one (password, identity, every earlier link); a registration that replaced
/// another is activated only with the password it was registered with.
@Suite("Account pre-hijacking")
struct PreHijackingTests {
    private func mailsTo(_ harness: TestHarness, _ email: String) throws -> [String] {
        try harness.mails().filter { $0.contains("To: <\(email.lowercased())>") }
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
            let mail = try #require(try mailsTo(harness, victim.email).last)
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
            let firstLink = try #require(try harness.activationToken(for: victim.email))
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let secondLink = try #require(try harness.activationToken(for: victim.email))
            #expect(secondLink != firstLink)
            // The second registration's mail started the cooldown: the victim's registration sends none.
            let mailsBefore = try mailsTo(harness, victim.email).count
            #expect(try await harness.request(.post, "/v1/users", json: victim.registrationJSON).status == .accepted)
            #expect(try mailsTo(harness, victim.email).count == mailsBefore)
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
            let victimsLink = try #require(try harness.activationToken(for: victim.email))
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let squattersLink = try #require(try harness.activationToken(for: victim.email))
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

    @Test("a squatter's unactivated registration of someone's fiscal code under another email does not block its owner")
    func fiscalCodeSquatter() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            let squatter = TestHarness.Person(password: "squatter-password-1", fiscalCode: victim.fiscalCode, fullName: "Mallory Squatter")
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            let squattersLink = try #require(try harness.activationToken(for: squatter.email))
            #expect(try await harness.request(.post, "/v1/users", json: victim.registrationJSON).status == .accepted)
            try await harness.activate(email: victim.email)
            _ = try await harness.logIn(email: victim.email, password: victim.password)
            #expect(try await activation(harness, token: squattersLink).status == .notFound)
            #expect(try await harness.int("SELECT count(*) FROM users WHERE fiscal_code = '\(victim.fiscalCode)'") == 1)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(squatter.email)'") == 0)
        }
    }

    @Test("a squatter's unactivated registration of a company's VAT number does not block the company")
    func vatNumberSquatter() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let squatter = TestHarness.Company(password: "squatter-password-1", vatNumber: company.vatNumber, companyName: "Squatter S.r.l.")
            _ = try await harness.request(.post, "/v1/third-parties", json: squatter.registrationJSON)
            #expect(try await harness.request(.post, "/v1/third-parties", json: company.registrationJSON).status == .accepted)
            try await harness.activate(email: company.email)
            _ = try await harness.logIn(email: company.email, password: company.password)
            #expect(try await harness.int("SELECT count(*) FROM third_parties WHERE vat_number = '\(company.vatNumber)'") == 1)
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
