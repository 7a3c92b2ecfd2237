import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Activation")
struct ActivationTests {
    /// Registers `person` and returns the token from their activation mail.
    private func register(_ person: TestHarness.Person, on harness: TestHarness) async throws -> String {
        let response = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
        try #require(response.status == .accepted)
        return try #require(try await harness.activationToken(for: person.email))
    }

    @Test("the mailed token activates the account, which can then log in")
    func activateWithMailedToken() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await register(person, on: harness)
            let before = Date()
            let response = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(response.status == .ok)
            let account = try harness.object(response)
            #expect(account["status"] as? String == "active")
            #expect(account["email"] as? String == person.email)
            let activatedAt = try #require(TestHarness.date(account["activatedAt"]), "activatedAt: \(account["activatedAt"] ?? "absent")")
            #expect(abs(activatedAt.timeIntervalSince(before)) < 30)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'active' AND activated_at IS NOT NULL") == 1)
            _ = try await harness.logIn(email: person.email, password: person.password)
        }
    }

    @Test("a company activates with its mailed token too")
    func companyActivates() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            #expect(try await harness.request(.post, "/v1/third-parties", json: company.registrationJSON).status == .accepted)
            let token = try #require(try await harness.activationToken(for: company.email))
            let response = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(response.status == .ok)
            #expect(try harness.object(response)["role"] as? String == "third_party")
            #expect(try harness.object(response)["status"] as? String == "active")
        }
    }

    @Test("a token pasted with spaces around it still activates")
    func tokenWithSurroundingSpaces() async throws {
        try await TestHarness.run { harness in
            let token = try await register(TestHarness.Person(), on: harness)
            let response = try await harness.request(.post, "/v1/activations", json: #"{"token":"  \#(token) "}"#)
            #expect(response.status == .ok)
        }
    }

    @Test("a token that was already used answers 404 and changes nothing")
    func usedToken() async throws {
        try await TestHarness.run { harness in
            let token = try await register(TestHarness.Person(), on: harness)
            let first = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(first.status == .ok)
            let activatedAt = "SELECT extract(epoch FROM activated_at)::text FROM accounts"
            let before = try await harness.sql(activatedAt).first?.decode(String.self)
            let again = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(again.status == .notFound)
            #expect(again.headers[.contentType] == "application/problem+json")
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'account.activated'") == 1)
            #expect(try await harness.sql(activatedAt).first?.decode(String.self) == before)
        }
    }

    @Test(
        "an unknown token answers 404",
        arguments: [
            "d4ha_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "not-a-token", "",
        ])
    func unknownToken(_ token: String) async throws {
        try await TestHarness.run { harness in
            _ = try await register(TestHarness.Person(), on: harness)
            let response = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(response.status == .notFound)
            #expect(try harness.object(response)["status"] as? Int == 404)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'active'") == 0)
        }
    }

    @Test("a session token is not an activation token")
    func sessionTokenDoesNotActivate() async throws {
        try await TestHarness.run { harness in
            let session = try await harness.activeUser()
            let other = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            _ = try await register(other, on: harness)
            let response = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(session)"}"#)
            #expect(response.status == .notFound)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'pending'") == 1)
        }
    }

    @Test("an expired token answers 410 and the account stays pending")
    func expiredToken() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await register(person, on: harness)
            _ = try await harness.sql("UPDATE activation_tokens SET expires_at = now() - interval '1 hour'")
            let response = try await harness.request(.post, "/v1/activations", json: #"{"token":"\#(token)"}"#)
            #expect(response.status == .gone)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE status = 'pending'") == 1)
            let login = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"\#(person.password)"}"#)
            #expect(login.status == .forbidden)
        }
    }

    @Test("an activation token is valid for 24 hours")
    func tokenValidity() async throws {
        try await TestHarness.run { harness in
            _ = try await register(TestHarness.Person(), on: harness)
            let hours = try await harness.int(
                "SELECT round(extract(epoch FROM expires_at - now()) / 3600)::int8 FROM activation_tokens")
            #expect(hours == 24)
        }
    }

    @Test("before activation the right password answers 403 and a wrong one 401")
    func logInBeforeActivation() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            _ = try await register(person, on: harness)
            let right = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"\#(person.password)"}"#)
            #expect(right.status == .forbidden)
            #expect(right.headers[.contentType] == "application/problem+json")
            let wrong = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"not-the-password"}"#)
            #expect(wrong.status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM sessions") == 0)
        }
    }

    @Test("a password sent when activating a person's account is ignored: the registered one still logs in")
    func passwordIgnoredForPeople() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await register(person, on: harness)
            let response = try await harness.request(
                .post, "/v1/activations", json: #"{"token":"\#(token)","password":"another-password-123"}"#)
            #expect(response.status == .ok)
            _ = try await harness.logIn(email: person.email, password: person.password)
            let other = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"another-password-123"}"#)
            #expect(other.status == .unauthorized)
        }
    }

    @Test("a registration that is never activated leaves the account unusable with its token")
    func pendingAccountHasNoSession() async throws {
        try await TestHarness.run { harness in
            let token = try await register(TestHarness.Person(), on: harness)
            let me = try await harness.request(.get, "/v1/me", token: token)
            #expect(me.status == .unauthorized)
        }
    }
}
