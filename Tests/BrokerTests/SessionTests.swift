import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Sessions")
struct SessionTests {
    @Test("a registered, activated person logs in and reads their profile")
    func logInAndReadProfile() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let me = try await harness.request(.get, "/v1/me", token: token)
            #expect(me.status == .ok)
            let profile = try harness.object(me)
            #expect(profile["email"] as? String == person.email)
            #expect(profile["status"] as? String == "active")
            #expect(profile["fiscalCode"] as? String == person.fiscalCode)
            #expect(profile["passwordHash"] == nil)
        }
    }

    /// Logs in and returns the whole session document.
    private func session(_ harness: TestHarness, email: String, password: String) async throws -> [String: Any] {
        let response = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(email)","password":"\#(password)"}"#)
        try #require(response.status == .created, "login answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    @Test("logging in gives a token, the role, the account id and an expiry one day (the default SESSION_TTL) ahead")
    func logInAnswer() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let now = Date()
            let session = try await session(harness, email: person.email, password: person.password)
            let token = try #require(session["token"] as? String)
            #expect(token.hasPrefix("d4hs_"))
            #expect(session["role"] as? String == "user")
            let expiresAt = try #require(TestHarness.date(session["expiresAt"]), "expiresAt: \(session["expiresAt"] ?? "absent")")
            #expect(abs(expiresAt.timeIntervalSince(now) - 86_400) < 30)
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: token))
            #expect(session["accountId"] as? String == me["id"] as? String)
            #expect(session["accountId"] != nil)
        }
    }

    @Test("a company logs in with the role third_party")
    func companyRole() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            try await harness.activeCompany(company)
            let session = try await session(harness, email: company.email, password: company.password)
            #expect(session["role"] as? String == "third_party")
        }
    }

    @Test("the email is matched whatever its letter case")
    func emailCaseInsensitiveAtLogin() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let session = try await session(harness, email: person.email.uppercased(), password: person.password)
            #expect(session["token"] != nil)
        }
    }

    @Test("SESSION_TTL sets how long a new session lasts")
    func sessionTTLIsHonoured() async throws {
        try await TestHarness.run(configure: { $0.sessionTTL = 120 }) { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let now = Date()
            let session = try await session(harness, email: person.email, password: person.password)
            let expiresAt = try #require(TestHarness.date(session["expiresAt"]))
            #expect(abs(expiresAt.timeIntervalSince(now) - 120) < 10)
            let seconds = try await harness.int(
                "SELECT max(round(extract(epoch FROM expires_at - created_at)))::int8 FROM sessions")
            #expect(seconds == 120)
        }
    }

    @Test("an unknown email and a wrong password get byte-identical 401 answers")
    func sameAnswerForUnknownEmailAndWrongPassword() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let unknown = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"nobody@example.com","password":"\#(person.password)"}"#)
            let wrong = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"wrong-password-1"}"#)
            #expect(unknown.status == .unauthorized)
            #expect(wrong.status == .unauthorized)
            #expect(unknown.body == wrong.body)
            #expect(unknown.headers[.contentType] == wrong.headers[.contentType])
            #expect(unknown.headers[.contentType] == "application/problem+json")
            #expect(!harness.text(wrong).contains(person.email))
        }
    }

    @Test("a request without a usable bearer token is refused with 401 and WWW-Authenticate: Bearer")
    func unusableBearer() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let unknownSession = "d4hs_" + String(repeating: "A", count: 43)
            let unknownKey = "d4hk_" + String(repeating: "B", count: 43)
            let cases: [(String, String?)] = [
                ("no Authorization header", nil),
                ("garbage", "Bearer not-a-token"),
                ("an unknown session token", "Bearer \(unknownSession)"),
                ("an unknown API key", "Bearer \(unknownKey)"),
                ("an empty bearer", "Bearer "),
                ("another scheme", "Basic \(Data("\(person.email):\(person.password)".utf8).base64EncodedString())"),
            ]
            for (label, authorization) in cases {
                var headers: HTTPFields = [:]
                if let authorization { headers[.authorization] = authorization }
                let response = try await harness.request(.get, "/v1/me", headers: headers)
                #expect(response.status == .unauthorized, "\(label)")
                #expect(response.headers[.wwwAuthenticate] == "Bearer", "\(label)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(label)")
            }
        }
    }

    @Test("an activation token is not a session token")
    func activationTokenIsNoBearer() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            #expect(try await harness.request(.post, "/v1/users", json: person.registrationJSON).status == .accepted)
            let activation = try #require(try await harness.activationToken(for: person.email))
            try await harness.activate(email: person.email)
            #expect(try await harness.request(.get, "/v1/me", token: activation).status == .unauthorized)
        }
    }

    @Test("logging out ends that session at once, but not the account's other sessions")
    func logOut() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let first = try await harness.activeUser(person)
            let second = try await harness.logIn(email: person.email, password: person.password)
            let logout = try await harness.request(.delete, "/v1/sessions/current", token: first)
            #expect(logout.status == .noContent)
            #expect(try await harness.request(.get, "/v1/me", token: first).status == .unauthorized)
            #expect(try await harness.request(.delete, "/v1/sessions/current", token: first).status == .unauthorized)
            #expect(try await harness.request(.get, "/v1/me", token: second).status == .ok)
        }
    }

    @Test("logging out without a token is a 401")
    func logOutWithoutToken() async throws {
        try await TestHarness.run { harness in
            let response = try await harness.request(.delete, "/v1/sessions/current")
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
        }
    }

    @Test("an expired session is refused with 401")
    func expiredSession() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let other = try await harness.logIn(email: person.email, password: person.password)
            #expect(try await harness.request(.get, "/v1/me", token: token).status == .ok)
            _ = try await harness.sql("UPDATE sessions SET expires_at = now() - interval '1 second'")
            let response = try await harness.request(.get, "/v1/me", token: token)
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
            #expect(try await harness.request(.get, "/v1/me", token: other).status == .unauthorized)
            // Logging in again gives a fresh session.
            let fresh = try await harness.logIn(email: person.email, password: person.password)
            #expect(try await harness.request(.get, "/v1/me", token: fresh).status == .ok)
        }
    }

    @Test("changing the password keeps the current session, ends the others, and only the new password logs in")
    func passwordChange() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let current = try await harness.activeUser(person)
            let other = try await harness.logIn(email: person.email, password: person.password)
            let third = try await harness.logIn(email: person.email, password: person.password)
            let newPassword = "a-brand-new-password"
            let change = try await harness.request(
                .patch, "/v1/me",
                json: #"{"currentPassword":"\#(person.password)","newPassword":"\#(newPassword)"}"#, token: current)
            #expect(change.status == .ok, "\(harness.text(change))")
            #expect(try await harness.request(.get, "/v1/me", token: current).status == .ok)
            #expect(try await harness.request(.get, "/v1/me", token: other).status == .unauthorized)
            #expect(try await harness.request(.get, "/v1/me", token: third).status == .unauthorized)
            let old = try await harness.request(
                .post, "/v1/sessions", json: #"{"email":"\#(person.email)","password":"\#(person.password)"}"#)
            #expect(old.status == .unauthorized)
            let fresh = try await harness.logIn(email: person.email, password: newPassword)
            #expect(try await harness.request(.get, "/v1/me", token: fresh).status == .ok)
        }
    }

    @Test("a password change does not touch another account's sessions")
    func passwordChangeIsPerAccount() async throws {
        try await TestHarness.run { harness in
            let laura = TestHarness.Person()
            let lauraToken = try await harness.activeUser(laura)
            let marco = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode(), fullName: "Marco Neri")
            let marcoToken = try await harness.activeUser(marco)
            let change = try await harness.request(
                .patch, "/v1/me",
                json: #"{"currentPassword":"\#(laura.password)","newPassword":"a-brand-new-password"}"#, token: lauraToken)
            #expect(change.status == .ok)
            #expect(try await harness.request(.get, "/v1/me", token: marcoToken).status == .ok)
        }
    }
}
