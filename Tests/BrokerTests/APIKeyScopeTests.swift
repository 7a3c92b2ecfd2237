import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 17, item 8: an API key could mint API keys (which outlived its revocation), change the account's
/// credentials and delete the account. Now no key may do those, a key may be read-only, and a key may expire.
@Suite("API keys: scopes and expiry")
struct APIKeyScopeTests {
    static func createKey(_ harness: TestHarness, _ token: String, _ json: String = "{}") async throws -> (
        id: String, secret: String, body: [String: Any]
    ) {
        let response = try await harness.request(.post, "/v1/api-keys", json: json, token: token)
        try #require(response.status == .created, "create key answered \(response.status): \(harness.text(response))")
        let key = try harness.object(response)
        return (try #require(key["id"] as? String), try #require(key["secret"] as? String), key)
    }

    static func slug(_ harness: TestHarness, _ response: TestResponse) throws -> String? {
        (try harness.object(response)["type"] as? String)?.components(separatedBy: "/").last
    }

    @Test(
        "a key can neither mint nor revoke keys, set the webhook, change the email or password, nor delete the account; revoked, nothing it made lives on"
    )
    func keysCannotManageKeysOrTheAccount() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let session = try await harness.activeCompany(company)
            let key = try await Self.createKey(harness, session, #"{"name":"leaked"}"#)
            let other = try await Self.createKey(harness, session, #"{"name":"other"}"#)

            let attempts: [(HTTPRequest.Method, String, String?)] = [
                (.post, "/v1/api-keys", #"{"name":"backdoor"}"#),
                (.delete, "/v1/api-keys/\(other.id)", nil),
                (.patch, "/v1/me", #"{"email":"attacker@example.com","currentPassword":"\#(company.password)"}"#),
                (.patch, "/v1/me", #"{"password":"attacker-password-1","currentPassword":"\#(company.password)"}"#),
                (.delete, "/v1/me", #"{"password":"\#(company.password)"}"#),
                (.put, "/v1/webhook", #"{"url":"https://attacker.example.com/hook","secret":"\#(WebhookFixtures.secret)"}"#),
                (.delete, "/v1/webhook", nil),
            ]
            for (method, path, body) in attempts {
                let response = try await harness.request(method, path, json: body, token: key.secret)
                #expect(response.status == .forbidden, "\(method) \(path) with a key answered \(response.status): \(harness.text(response))")
                #expect(try Self.slug(harness, response) == "session-required", "\(method) \(path)")
            }
            // Nothing changed: two live keys, the other one works, no webhook, the email and password are the company's.
            #expect(try await harness.int("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL") == 2)
            #expect(try await harness.int("SELECT count(*) FROM webhooks") == 0)
            #expect(try await harness.request(.get, "/v1/me", token: other.secret).status == .ok)
            let me = try harness.object(try await harness.request(.get, "/v1/me", token: session))
            #expect(me["email"] as? String == company.email)
            #expect(try await harness.logIn(email: company.email, password: company.password).isEmpty == false)

            // The session revokes the leaked key: it stops, and it left no key behind.
            #expect(try await harness.request(.delete, "/v1/api-keys/\(key.id)", token: session).status == .noContent)
            #expect(try await harness.request(.get, "/v1/me", token: key.secret).status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL") == 1)
        }
    }

    @Test("a read-only key reads and estimates, and every change is 403 api-key-read-only with nothing stored")
    func readOnlyKey() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let key = try await Self.createKey(harness, parties.company, #"{"name":"dashboard","scope":"read_only"}"#)
            #expect(key.body["scope"] as? String == "read_only")
            for path in ["/v1/me", "/v1/single-requests", "/v1/group-requests", "/v1/privacy/budget", "/v1/api-keys"] {
                let response = try await harness.request(.get, path, token: key.secret)
                #expect(response.status == .ok, "GET \(path): \(response.status)")
            }
            let estimate = try await harness.request(
                .post, "/v1/group-requests/estimate",
                json:
                    #"{"types":["heart_rate"],"demographics":{"sex":"F"},"window":{"from":"2026-03-01","to":"2026-03-07"},"bucket":"day","purposeCode":"HRESCH","purpose":"x"}"#,
                token: key.secret)
            #expect(estimate.status == .ok, "estimate: \(harness.text(estimate))")

            let changes: [(HTTPRequest.Method, String, String)] = [
                (
                    .post, "/v1/single-requests",
                    #"{"subject":{"email":"\#(parties.personEmail)"},"types":["heart_rate"],"purposeCode":"HRESCH","purpose":"Study"}"#
                ),
                (
                    .post, "/v1/group-requests",
                    #"{"types":["heart_rate"],"window":{"from":"2026-03-01","to":"2026-03-07"},"bucket":"day","purposeCode":"HRESCH","purpose":"x"}"#
                ),
            ]
            for (method, path, body) in changes {
                let response = try await harness.request(method, path, json: body, token: key.secret)
                #expect(response.status == .forbidden, "\(method) \(path): \(response.status) \(harness.text(response))")
                #expect(try Self.slug(harness, response) == "api-key-read-only", "\(method) \(path)")
            }
            #expect(try await harness.int("SELECT count(*) FROM single_requests") == 0)
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 0)
            // The same company's session may do all of it.
            let allowed = try await harness.request(.post, "/v1/single-requests", json: changes[0].2, token: parties.company)
            #expect(allowed.status == .created)
            // A read-only key may end itself.
            #expect(try await harness.request(.delete, "/v1/sessions/current", token: key.secret).status == .noContent)
            #expect(try await harness.request(.get, "/v1/me", token: key.secret).status == .unauthorized)
        }
    }

    @Test("a key works until its expiry, then is 401 and leaves the list; a past or too distant expiry or an unknown scope stores nothing")
    func expiry() async throws {
        try await TestHarness.run { harness in
            let session = try await harness.activeCompany()
            let inAnHour = Timestamp.rfc3339(Date().addingTimeInterval(3600))
            let key = try await Self.createKey(harness, session, #"{"name":"temporary","expiresAt":"\#(inAnHour)"}"#)
            #expect(TestHarness.date(key.body["expiresAt"]) != nil)
            #expect(key.body["scope"] as? String == "full")
            #expect(try await harness.request(.get, "/v1/me", token: key.secret).status == .ok)
            let listed = try harness.object(try await harness.request(.get, "/v1/api-keys", token: session))["items"] as? [[String: Any]]
            #expect(listed?.first.flatMap { TestHarness.date($0["expiresAt"]) } != nil)

            // The hour passes (moved, not waited for).
            _ = try await harness.sql("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = '\(key.id)'")
            #expect(try await harness.request(.get, "/v1/me", token: key.secret).status == .unauthorized)
            let after = try harness.object(try await harness.request(.get, "/v1/api-keys", token: session))["items"] as? [[String: Any]]
            #expect(after?.isEmpty == true)

            let past = Timestamp.rfc3339(Date().addingTimeInterval(-60))
            let distant = Timestamp.rfc3339(Date().addingTimeInterval(6 * 366 * 86_400))
            for body in [#"{"expiresAt":"\#(past)"}"#, #"{"expiresAt":"\#(distant)"}"#] {
                let response = try await harness.request(.post, "/v1/api-keys", json: body, token: session)
                #expect(response.status == .unprocessableContent, "\(body): \(response.status)")
                #expect(try harness.errorFields(response) == ["expiresAt"], "\(body)")
            }
            let unknownScope = try await harness.request(.post, "/v1/api-keys", json: #"{"scope":"admin"}"#, token: session)
            #expect([.badRequest, .unprocessableContent].contains(unknownScope.status), "\(unknownScope.status)")
            #expect(try await harness.int("SELECT count(*) FROM api_keys") == 1)
        }
    }

    @Test("the console creates a read-only key that expires in 30 days and lists its scope and expiry")
    func consoleForm() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            let browser = try await ConsoleBrowser.company(harness, parties)
            _ = try await browser.get("/company/settings")
            let created = try await browser.post("/company/api-keys", [("name", "wall screen"), ("scope", "read_only"), ("expiresInDays", "30")])
            #expect(created.status == .ok)
            #expect(browser.lastPage.contains("api-key-secret"))
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM api_keys WHERE scope = 'read_only' AND expires_at BETWEEN now() + interval '29 days' AND now() + interval '31 days'"
                ) == 1)
            _ = try await browser.get("/company/settings")
            #expect(browser.lastPage.contains("read only"))
            let refused = try await browser.post("/company/api-keys", [("name", "odd"), ("scope", "full"), ("expiresInDays", "7")])
            #expect(refused.status == .unprocessableContent)
            #expect(try await harness.int("SELECT count(*) FROM api_keys") == 1)
        }
    }
}
