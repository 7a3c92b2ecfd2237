import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Issue 17, item 3: registering someone else's email or fiscal code and never activating must not block
/// its owner. Unactivated accounts expire after 48 hours (`ACTIVATION_EXPIRY_HOURS`); the activation mail
/// can be sent again.
@Suite("Identity squatting")
struct IdentitySquattingTests {
    private func age(_ harness: TestHarness, _ email: String, hours: Int = 49) async throws {
        _ = try await harness.sql(
            "UPDATE accounts SET created_at = now() - interval '\(hours) hours' WHERE email = '\(email.lowercased())'")
    }

    private func mailsTo(_ harness: TestHarness, _ email: String) async throws -> Int {
        try await harness.mails().filter { $0.contains("To: <\(email.lowercased())>") }.count
    }

    @Test("an unactivated squatter of an email and a fiscal code gives way to the owner after 48 hours")
    func squatterOfEmailAndFiscalCodeExpires() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person()
            var squatter = victim
            squatter.password = "squatter-password-1"
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            try await age(harness, victim.email)
            let response = try await harness.request(.post, "/v1/users", json: victim.registrationJSON)
            #expect(response.status.kind == .successful, "\(response.status)")
            try await harness.activate(email: victim.email)
            _ = try await harness.logIn(email: victim.email, password: victim.password)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
        }
    }

    @Test("an unactivated squatter of a fiscal code under another email gives way to the owner after 48 hours")
    func squatterOfFiscalCodeExpires() async throws {
        try await TestHarness.run { harness in
            let victim = TestHarness.Person()
            let squatter = TestHarness.Person(password: "squatter-password-1", fiscalCode: victim.fiscalCode)
            _ = try await harness.request(.post, "/v1/users", json: squatter.registrationJSON)
            try await age(harness, squatter.email)
            _ = try await harness.request(.post, "/v1/users", json: victim.registrationJSON)
            try await harness.activate(email: victim.email)
            _ = try await harness.logIn(email: victim.email, password: victim.password)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(squatter.email)'") == 0)
        }
    }

    @Test("an unactivated squatter of a VAT number gives way to the company after 48 hours")
    func squatterOfVATNumberExpires() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let squatter = TestHarness.Company(password: "squatter-password-1", companyName: "Squatter S.r.l.")
            _ = try await harness.request(.post, "/v1/third-parties", json: squatter.registrationJSON)
            try await age(harness, squatter.email)
            _ = try await harness.request(.post, "/v1/third-parties", json: company.registrationJSON)
            try await harness.activate(email: company.email)
            _ = try await harness.logIn(email: company.email, password: company.password)
        }
    }

    @Test("the activation link of an account past 48 hours stops working with a clear 410")
    func expiredAccountCannotActivate() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            _ = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            let token = try #require(try await harness.activationToken(for: person.email))
            try await age(harness, person.email)
            let response = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(response.status == .gone)
            #expect(try harness.object(response)["type"] as? String == "https://data4help.example/problems/registration-expired")
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'active'") == 0)
        }
    }

    @Test("an account not yet 48 hours old still holds its fiscal code against another email's registration")
    func youngAccountsStillHold() async throws {
        try await TestHarness.run { harness in
            let first = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            _ = try await harness.request(.post, "/v1/users", json: first.registrationJSON)
            let link = try #require(try await harness.activationToken(for: first.email))
            try await age(harness, first.email, hours: 47)
            let second = TestHarness.Person(password: "another-password-1", fiscalCode: first.fiscalCode)
            #expect(try await harness.request(.post, "/v1/users", json: second.registrationJSON).status == .accepted)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            // Only a registration of the same email replaces a pending one (PreHijackingTests); the first
            // was told someone tried, and its link still activates it.
            #expect(try await mailsTo(harness, first.email) == 2)
            #expect(try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(link)"}"#).status == .ok)
            _ = try await harness.logIn(email: first.email, password: first.password)
        }
    }

    @Test("the activation mail can be sent again: 202 for any well-formed email, a new link, the old one retired")
    func activationMailAgain() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            _ = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            let oldToken = try #require(try await harness.activationToken(for: person.email))
            let known = try await harness.request(.post, "/v1/accounts/activation-mail", json: #"{"email":"\#(person.email.uppercased())"}"#)
            let unknown = try await harness.request(.post, "/v1/accounts/activation-mail", json: #"{"email":"nobody@example.com"}"#)
            #expect(known.status == .accepted)
            #expect(unknown.status == .accepted)
            #expect(String(buffer: known.body) == String(buffer: unknown.body))
            #expect(try await mailsTo(harness, person.email) == 2)
            #expect(try await mailsTo(harness, "nobody@example.com") == 0)
            let newToken = try #require(try await harness.activationToken(for: person.email))
            #expect(newToken != oldToken)
            let old = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(oldToken)"}"#)
            #expect(old.status == .notFound)
            try await harness.activate(email: person.email)
            // Once active, asking again sends nothing (and still answers 202).
            let after = try await harness.request(.post, "/v1/accounts/activation-mail", json: #"{"email":"\#(person.email)"}"#)
            #expect(after.status == .accepted)
            #expect(try await mailsTo(harness, person.email) == 2)
        }
    }

    @Test("asking for the activation mail again and again sends at most one every 5 minutes")
    func activationMailIsRateLimited() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            _ = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            for _ in 1...5 {
                let response = try await harness.request(.post, "/v1/accounts/activation-mail", json: #"{"email":"\#(person.email)"}"#)
                #expect(response.status == .accepted)
            }
            #expect(try await mailsTo(harness, person.email) == 2, "the registration's mail and one more")
            let malformed = try await harness.request(.post, "/v1/accounts/activation-mail", json: #"{"email":"not-an-email"}"#)
            #expect(malformed.status == .unprocessableContent)
        }
    }
}
