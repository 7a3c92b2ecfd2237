import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("API keys")
struct APIKeyTests {
    /// Creates a key and returns (id, secret).
    private func createKey(_ harness: TestHarness, _ token: String, name: String? = nil) async throws -> (id: String, secret: String) {
        let json = name.map { #"{"name":"\#($0)"}"# } ?? "{}"
        let response = try await harness.request(.post, "/v1/api-keys", json: json, token: token)
        try #require(response.status == .created, "create key answered \(response.status): \(harness.text(response))")
        let key = try harness.object(response)
        return (try #require(key["id"] as? String), try #require(key["secret"] as? String))
    }

    private func list(_ harness: TestHarness, _ token: String, query: String = "") async throws -> [String: Any] {
        let response = try await harness.request(.get, "/v1/api-keys\(query)", token: token)
        try #require(response.status == .ok, "list answered \(response.status): \(harness.text(response))")
        return try harness.object(response)
    }

    private func ids(_ page: [String: Any]) -> [String] {
        (page["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    /// The last page carries no cursor: the field is absent or null.
    private func hasNoCursor(_ page: [String: Any]) -> Bool {
        page["nextCursor"] == nil || page["nextCursor"] is NSNull
    }

    @Test("a company creates a key whose secret, shown once, works as a bearer token")
    func createAndUse() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company()
            let token = try await harness.activeCompany(company)
            let response = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"nightly export"}"#, token: token)
            #expect(response.status == .created)
            let key = try harness.object(response)
            let secret = try #require(key["secret"] as? String)
            #expect(secret.hasPrefix("d4hk_"))
            #expect(secret.count > 40)
            #expect(key["name"] as? String == "nightly export")
            #expect(UUID(uuidString: key["id"] as? String ?? "") != nil)
            #expect((key["prefix"] as? String).map { secret.hasPrefix($0) && $0.count < secret.count } == true)
            #expect(TestHarness.date(key["createdAt"]) != nil)

            let me = try await harness.request(.get, "/v1/me", token: secret)
            #expect(me.status == .ok)
            #expect(try harness.object(me)["email"] as? String == company.email)
            #expect(try harness.object(me)["role"] as? String == "third_party")
            // Only the hash is stored.
            #expect(try await harness.int("SELECT count(*) FROM api_keys WHERE secret_hash = sha256(convert_to('\(secret)', 'UTF8'))") == 1)
            #expect(try await harness.int("SELECT count(*) FROM api_keys WHERE position('\(secret)' in prefix || name) > 0") == 0)
        }
    }

    @Test("a key without a name is called \"API key\"")
    func defaultName() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let response = try await harness.request(.post, "/v1/api-keys", json: "{}", token: token)
            #expect(response.status == .created)
            #expect(try harness.object(response)["name"] as? String == "API key")
        }
    }

    @Test("the key list shows each key without its secret")
    func listWithoutSecrets() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let key = try await createKey(harness, token, name: "reporting")
            let response = try await harness.request(.get, "/v1/api-keys", token: token)
            #expect(response.status == .ok)
            let page = try harness.object(response)
            let items = try #require(page["items"] as? [[String: Any]])
            try #require(items.count == 1)
            #expect(items[0]["id"] as? String == key.id)
            #expect(items[0]["name"] as? String == "reporting")
            #expect(items[0]["secret"] == nil)
            #expect(!harness.text(response).contains(key.secret))
            #expect(hasNoCursor(page))
        }
    }

    @Test("the list pages with limit and nextCursor, newest first, each key exactly once")
    func pagination() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            var created: [String] = []
            for index in 1...3 { created.append(try await createKey(harness, token, name: "key \(index)").id) }

            let first = try await list(harness, token, query: "?limit=1")
            #expect(ids(first) == [created[2]])
            let cursor1 = try #require(first["nextCursor"] as? String)
            let second = try await list(harness, token, query: "?limit=1&cursor=\(cursor1)")
            #expect(ids(second) == [created[1]])
            let cursor2 = try #require(second["nextCursor"] as? String)
            let third = try await list(harness, token, query: "?limit=1&cursor=\(cursor2)")
            #expect(ids(third) == [created[0]])
            #expect(hasNoCursor(third))

            let twoPerPage = try await list(harness, token, query: "?limit=2")
            #expect(ids(twoPerPage) == [created[2], created[1]])
            let rest = try await list(harness, token, query: "?limit=2&cursor=\(try #require(twoPerPage["nextCursor"] as? String))")
            #expect(ids(rest) == [created[0]])
            #expect(hasNoCursor(rest))

            let all = try await list(harness, token, query: "?limit=3")
            #expect(ids(all) == created.reversed())
            #expect(hasNoCursor(all))
        }
    }

    @Test(
        "a limit outside 1–1000 or a cursor the API did not give out is a 422 naming it",
        arguments: [
            ("?limit=0", "limit"), ("?limit=1001", "limit"), ("?limit=-5", "limit"),
            ("?cursor=garbage", "cursor"), ("?cursor=bm90LWEtY3Vyc29y", "cursor"),
        ])
    func badPageParameters(query: String, field: String) async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let response = try await harness.request(.get, "/v1/api-keys\(query)", token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == [field])
        }
    }

    @Test(
        "a limit that is not a whole number is a 422 naming limit, not a \"malformed body\"",
        arguments: ["?limit=abc", "?limit=1.5", "?limit="])
    func nonNumericLimit(query: String) async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let response = try await harness.request(.get, "/v1/api-keys\(query)", token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["limit"])
        }
    }

    @Test("limits of 1 and 1000 are accepted")
    func limitBounds() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            _ = try await createKey(harness, token)
            #expect(ids(try await list(harness, token, query: "?limit=1")).count == 1)
            #expect(ids(try await list(harness, token, query: "?limit=1000")).count == 1)
        }
    }

    @Test("a revoked key stops working at once and leaves the list")
    func revoke() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let kept = try await createKey(harness, token, name: "kept")
            let revoked = try await createKey(harness, token, name: "revoked")
            let response = try await harness.request(.delete, "/v1/api-keys/\(revoked.id)", token: token)
            #expect(response.status == .noContent)
            let me = try await harness.request(.get, "/v1/me", token: revoked.secret)
            #expect(me.status == .unauthorized)
            #expect(me.headers[.wwwAuthenticate] == "Bearer")
            #expect(try await harness.request(.get, "/v1/me", token: kept.secret).status == .ok)
            #expect(ids(try await list(harness, token)) == [kept.id])
            // Revoking it again: there is no such live key any more.
            #expect(try await harness.request(.delete, "/v1/api-keys/\(revoked.id)", token: token).status == .notFound)
        }
    }

    @Test("revoking another company's key answers 404 and the key keeps working for its owner")
    func revokeOthersKey() async throws {
        try await TestHarness.run { harness in
            let owner = try await harness.activeCompany()
            let key = try await createKey(harness, owner)
            let intruder = try await harness.activeCompany(
                TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber(), companyName: "Snoop S.r.l."))
            let response = try await harness.request(.delete, "/v1/api-keys/\(key.id)", token: intruder)
            #expect(response.status == .notFound)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try await harness.request(.get, "/v1/me", token: key.secret).status == .ok)
            #expect(ids(try await list(harness, owner)) == [key.id])
            #expect(ids(try await list(harness, intruder)).isEmpty)
        }
    }

    @Test(
        "revoking an id that is no UUID, or no key at all, answers 404",
        arguments: [
            "not-a-uuid", "12345", "00000000-0000-0000-0000-000000000000",
        ])
    func revokeUnknownID(_ id: String) async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let key = try await createKey(harness, token)
            let response = try await harness.request(.delete, "/v1/api-keys/\(id)", token: token)
            #expect(response.status == .notFound)
            #expect(try harness.object(response)["status"] as? Int == 404)
            #expect(try await harness.request(.get, "/v1/me", token: key.secret).status == .ok)
        }
    }

    @Test("a person may not create, list or revoke API keys (403)")
    func personForbidden() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let create = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"mine"}"#, token: token)
            #expect(create.status == .forbidden)
            #expect(create.headers[.contentType] == "application/problem+json")
            #expect(try await harness.request(.get, "/v1/api-keys", token: token).status == .forbidden)
            #expect(try await harness.request(.delete, "/v1/api-keys/\(UUID().uuidString)", token: token).status == .forbidden)
            #expect(try await harness.int("SELECT count(*) FROM api_keys") == 0)
        }
    }

    @Test("API keys need a logged-in company (401 without a token)")
    func anonymousRefused() async throws {
        try await TestHarness.run { harness in
            let create = try await harness.request(.post, "/v1/api-keys", json: "{}")
            let list = try await harness.request(.get, "/v1/api-keys")
            let revoke = try await harness.request(.delete, "/v1/api-keys/\(UUID().uuidString)")
            #expect([create.status, list.status, revoke.status] == [.unauthorized, .unauthorized, .unauthorized])
        }
    }

    @Test("an empty key name is a 422 naming it")
    func emptyName() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let response = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"   "}"#, token: token)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["name"])
        }
    }

    @Test(
        "a key name with a line break or another control character is a 422 naming it: no key, no mail",
        arguments: ["ci\\nScope: read only", "ci\\r\\nWorks: until 2020", "ci\\u2028Scope: read only", "ci\\u0000"])
    func nameWithLineBreaks(name: String) async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let mailsBefore = try await harness.mails().count
            let response = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"\#(name)"}"#, token: token)
            #expect(response.status == .unprocessableContent, "\(harness.text(response))")
            #expect(try harness.errorFields(response) == ["name"])
            #expect(try await harness.int("SELECT count(*) FROM api_keys") == 0)
            #expect(try await harness.mails().count == mailsBefore)
        }
    }

    @Test("the key mail quotes the key's name, so a name cannot pass for a line of its own")
    func mailQuotesTheName() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            _ = try await createKey(harness, token, name: "Scope: read only")
            let mail = try #require(try await harness.mails().last)
            #expect(mail.contains("Name: “Scope: read only”"), "\(mail)")
        }
    }

    @Test("the console's key form refuses a name with a line break, beside its field, and makes no key")
    func consoleRefusesLineBreaks() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            try await harness.activeCompany(company)
            let browser = ConsoleBrowser(harness)
            _ = try await browser.logIn(company.email, company.password)
            try await browser.get("/company/settings")
            let response = try await browser.post("/company/api-keys", [("name", "ci\nScope: read only"), ("scope", "full"), ("expiresInDays", "")])
            #expect(response.status == .unprocessableContent)
            #expect(browser.lastPage.contains(#"id="name-error""#), "\(browser.lastPage)")
            #expect(try await harness.int("SELECT count(*) FROM api_keys") == 0)
        }
    }

    @Test("the list records when a key was last used")
    func lastUsedAt() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany()
            let key = try await createKey(harness, token)
            let before = try #require((try await list(harness, token))["items"] as? [[String: Any]])
            #expect(before.first?["lastUsedAt"] == nil || before.first?["lastUsedAt"] is NSNull)
            #expect(try await harness.request(.get, "/v1/me", token: key.secret).status == .ok)
            let after = try #require((try await list(harness, token))["items"] as? [[String: Any]])
            #expect(TestHarness.date(after.first?["lastUsedAt"]) != nil)
        }
    }
}
