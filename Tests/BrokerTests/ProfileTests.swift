import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Profile")
struct ProfileTests {
    private func me(_ harness: TestHarness, _ token: String) async throws -> [String: Any] {
        let response = try await harness.request(.get, "/v1/me", token: token)
        try #require(response.status == .ok, "GET /v1/me answered \(response.status)")
        return try harness.object(response)
    }

    private func logInStatus(_ harness: TestHarness, _ email: String, _ password: String) async throws -> HTTPResponse.Status {
        try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(email)","password":"\#(password)"}"#).status
    }

    // MARK: Reading

    @Test("a person's profile shows their identity and nothing of a company")
    func personProfile() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let profile = try await me(harness, token)
            #expect(profile["role"] as? String == "user")
            #expect(profile["email"] as? String == person.email)
            #expect(profile["fiscalCode"] as? String == person.fiscalCode)
            #expect(profile["birthDate"] as? String == "1990-01-01")
            #expect(profile["sex"] as? String == "F")
            #expect(profile["fullName"] as? String == person.fullName)
            #expect(profile["status"] as? String == "active")
            #expect(profile["companyName"] == nil && profile["vatNumber"] == nil)
            #expect(profile["passwordHash"] == nil && profile["password"] == nil)
        }
    }

    @Test("a company's profile shows its name, VAT number and description, and nothing of a person")
    func companyProfile() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let token = try await harness.activeCompany(company)
            let profile = try await me(harness, token)
            #expect(profile["role"] as? String == "third_party")
            #expect(profile["companyName"] as? String == company.companyName)
            #expect(profile["vatNumber"] as? String == company.vatNumber)
            #expect(profile["fiscalCode"] == nil && profile["fullName"] == nil && profile["birthDate"] == nil)
            #expect(profile["passwordHash"] == nil)
        }
    }

    @Test(
        "reading, changing or erasing the profile without a token is a 401",
        arguments: [
            HTTPRequest.Method.get, .patch, .delete,
        ])
    func notLoggedIn(method: HTTPRequest.Method) async throws {
        try await TestHarness.run { harness in
            let json: String? =
                switch method {
                case .patch: #"{"fullName":"Nobody"}"#
                case .delete: #"{"password":"whatever-password"}"#
                default: nil
                }
            let response = try await harness.request(method, "/v1/me", json: json)
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
        }
    }

    // MARK: Changing

    @Test("a person changes their full name, and the change is kept")
    func personChangesName() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.request(.patch, "/v1/me", json: #"{"fullName":"Laura Bianchi Verdi"}"#, token: token)
            #expect(response.status == .ok)
            #expect(try harness.object(response)["fullName"] as? String == "Laura Bianchi Verdi")
            #expect(try await me(harness, token)["fullName"] as? String == "Laura Bianchi Verdi")
        }
    }

    @Test("a company changes its name and description, one at a time or together")
    func companyChangesNameAndDescription() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let token = try await harness.activeCompany(company)
            let both = try await harness.request(
                .patch, "/v1/me", json: #"{"companyName":"Cardio Labs S.r.l.","description":"Heart studies"}"#, token: token)
            #expect(both.status == .ok)
            var profile = try await me(harness, token)
            #expect(profile["companyName"] as? String == "Cardio Labs S.r.l.")
            #expect(profile["description"] as? String == "Heart studies")

            let descriptionOnly = try await harness.request(
                .patch, "/v1/me", json: #"{"description":"Heart and sleep studies"}"#, token: token)
            #expect(descriptionOnly.status == .ok)
            profile = try await me(harness, token)
            #expect(profile["companyName"] as? String == "Cardio Labs S.r.l.")
            #expect(profile["description"] as? String == "Heart and sleep studies")
            #expect(profile["vatNumber"] as? String == company.vatNumber)
        }
    }

    @Test("a field of the other role is a 422 naming it, and nothing changes")
    func fieldOfAnotherRole() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let userToken = try await harness.activeUser(person)
            let asUser = try await harness.request(
                .patch, "/v1/me", json: #"{"fullName":"New Name","companyName":"Laura S.p.A."}"#, token: userToken)
            #expect(asUser.status == .unprocessableContent)
            #expect(try harness.errorFields(asUser) == ["companyName"])
            #expect(try await me(harness, userToken)["fullName"] as? String == person.fullName)

            let company = TestHarness.Company()
            let companyToken = try await harness.activeCompany(company)
            let asCompany = try await harness.request(
                .patch, "/v1/me", json: #"{"fullName":"Mario Rossi","companyName":"Renamed"}"#, token: companyToken)
            #expect(asCompany.status == .unprocessableContent)
            #expect(try harness.errorFields(asCompany) == ["fullName"])
            #expect(try await me(harness, companyToken)["companyName"] as? String == company.companyName)
        }
    }

    @Test(
        "trying to change an immutable field is a 422 naming it, and nothing changes",
        arguments: [
            ("email", #""someone.else@example.com""#),
            ("fiscalCode", #""RSSMRA85T10A562S""#),
            ("vatNumber", #""12345678903""#),
            ("birthDate", #""1985-12-10""#),
            ("sex", #""M""#),
        ])
    func immutableField(field: String, value: String) async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let before = try await me(harness, token)
            let response = try await harness.request(
                .patch, "/v1/me", json: #"{"fullName":"Changed Name","\#(field)":\#(value)}"#, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == [field])
            let after = try await me(harness, token)
            for key in ["email", "fiscalCode", "birthDate", "sex", "fullName"] {
                #expect(after[key] as? String == before[key] as? String, "\(key)")
            }
            #expect(after["vatNumber"] == nil)
        }
    }

    @Test("a company cannot change its VAT number or email")
    func companyImmutableFields() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let token = try await harness.activeCompany(company)
            let response = try await harness.request(
                .patch, "/v1/me",
                json: #"{"companyName":"Renamed","vatNumber":"\#(TestHarness.uniqueVATNumber())","email":"x@example.com"}"#,
                token: token)
            #expect(response.status == .unprocessableContent)
            #expect(Set(try harness.errorFields(response)) == ["vatNumber", "email"])
            let profile = try await me(harness, token)
            #expect(profile["vatNumber"] as? String == company.vatNumber)
            #expect(profile["email"] as? String == company.email)
            #expect(profile["companyName"] as? String == company.companyName)
        }
    }

    @Test("an empty full name is a 422 naming it")
    func emptyFullName() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let response = try await harness.request(.patch, "/v1/me", json: #"{"fullName":"  "}"#, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["fullName"])
        }
    }

    @Test("a new password without the current one is a 422 naming currentPassword, and the password stays")
    func newPasswordWithoutCurrent() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let response = try await harness.request(.patch, "/v1/me", json: #"{"newPassword":"a-brand-new-password"}"#, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["currentPassword"])
            #expect(try await logInStatus(harness, person.email, "a-brand-new-password") == .unauthorized)
            #expect(try await logInStatus(harness, person.email, person.password) == .created)
        }
    }

    @Test("the current password without a new one is a 422 naming newPassword")
    func currentPasswordWithoutNew() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let response = try await harness.request(
                .patch, "/v1/me", json: #"{"currentPassword":"\#(person.password)"}"#, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["newPassword"])
        }
    }

    @Test("a wrong current password is a 422, the password stays and the other sessions keep working")
    func wrongCurrentPassword() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let other = try await harness.logIn(email: person.email, password: person.password)
            let response = try await harness.request(
                .patch, "/v1/me", json: #"{"currentPassword":"not-my-password","newPassword":"a-brand-new-password"}"#,
                token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["currentPassword"])
            #expect(try await harness.request(.get, "/v1/me", token: other).status == .ok)
            #expect(try await logInStatus(harness, person.email, "a-brand-new-password") == .unauthorized)
            #expect(try await logInStatus(harness, person.email, person.password) == .created)
        }
    }

    @Test("a new password that breaks the policy is a 422 naming newPassword", arguments: ["short", "email"])
    func weakNewPassword(kind: String) async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let newPassword = kind == "email" ? person.email : "short"
            let response = try await harness.request(
                .patch, "/v1/me", json: #"{"currentPassword":"\#(person.password)","newPassword":"\#(newPassword)"}"#,
                token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["newPassword"])
            #expect(try await logInStatus(harness, person.email, person.password) == .created)
        }
    }

    // MARK: Erasure

    @Test("erasing with a wrong password is a 422 and the account stays")
    func eraseWithWrongPassword() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let response = try await harness.request(.delete, "/v1/me", json: #"{"password":"not-my-password"}"#, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["password"])
            #expect(try await harness.request(.get, "/v1/me", token: token).status == .ok)
            #expect(try await harness.int("SELECT count(*) FROM accounts") == 1)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'account.erased'") == 0)
        }
    }

    @Test(
        "erasing with the right password removes the person: no login, no session, the email and fiscal code are free again, and the audit log keeps only a pseudonym"
    )
    func erasePerson() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person(fullName: "Giulietta Capuleti-Montecchi")
            let token = try await harness.activeUser(person)
            let other = try await harness.logIn(email: person.email, password: person.password)
            let response = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(person.password)"}"#, token: token)
            #expect(response.status == .noContent)

            #expect(try await logInStatus(harness, person.email, person.password) == .unauthorized)
            #expect(try await harness.request(.get, "/v1/me", token: token).status == .unauthorized)
            #expect(try await harness.request(.get, "/v1/me", token: other).status == .unauthorized)
            for table in ["accounts", "users", "sessions", "activation_tokens"] {
                #expect(try await harness.int("SELECT count(*) FROM \(table)") == 0, "\(table)")
            }

            let erased = try await harness.sql(
                "SELECT subject, actor_role FROM audit_events WHERE action = 'account.erased'")
            try #require(erased.count == 1)
            let (subject, actorRole) = try erased[0].decode((String?, String).self)
            #expect(subject?.hasPrefix("p_") == true)
            #expect(actorRole == "user")
            let created = try await harness.sql("SELECT subject FROM audit_events WHERE action = 'account.created'")
            #expect(try created.first?.decode(String?.self) == subject)

            // The same person may register again.
            #expect(try await harness.request(.post, "/v1/users", json: person.registrationJSON).status == .accepted)

            for needle in [person.email, person.fullName, person.fiscalCode, "Giulietta"] {
                let leaks = try await harness.int(
                    """
                    SELECT count(*) FROM audit_events
                    WHERE coalesce(actor_id, '') ILIKE '%\(needle)%' OR coalesce(subject, '') ILIKE '%\(needle)%'
                       OR details::text ILIKE '%\(needle)%'
                    """)
                #expect(leaks == 0, "\(needle) appears in the audit log")
            }
        }
    }

    @Test("an auditor cannot erase their own account through the API (403)")
    func auditorCannotErase() async throws {
        try await TestHarness.run { harness in
            // Auditors come from `d4h auditors add`; an active one is inserted directly here.
            let email = "auditor.\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let password = "auditor-password-1"
            let hash = try await PasswordHasher().hash(password)
            _ = try await harness.sql(
                "INSERT INTO accounts (role, email, password_hash, status, activated_at) VALUES ('auditor', '\(email)', '\(hash)', 'active', now())")
            let token = try await harness.logIn(email: email, password: password)
            let response = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(password)"}"#, token: token)
            #expect(response.status == .forbidden)
            #expect(try await harness.request(.get, "/v1/me", token: token).status == .ok)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE role = 'auditor'") == 1)
        }
    }

    @Test("an erased company's sessions and API keys stop working and its VAT number is free again")
    func eraseCompany() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let token = try await harness.activeCompany(company)
            let key = try await harness.request(.post, "/v1/api-keys", json: "{}", token: token)
            let secret = try #require(try harness.object(key)["secret"] as? String)
            let response = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(company.password)"}"#, token: token)
            #expect(response.status == .noContent)
            #expect(try await harness.request(.get, "/v1/me", token: token).status == .unauthorized)
            #expect(try await harness.request(.get, "/v1/me", token: secret).status == .unauthorized)
            #expect(try await logInStatus(harness, company.email, company.password) == .unauthorized)
            #expect(try await harness.request(.post, "/v1/third-parties", json: company.registrationJSON).status == .accepted)
        }
    }
}
