import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Synchronization
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 27, item 6: an API key must not outlive the password it was made with. Someone who stole a
/// company's password and made a key kept reading people's data after the owner changed the password.
@Suite("API keys end with the password")
struct APIKeyPasswordChangeTests {
    /// A wall clock the test sets by hand (`BrokerConfiguration.clock`).
    final class HandClock: Sendable {
        private let time = Mutex(Date(timeIntervalSince1970: (Date().timeIntervalSince1970).rounded()))
        var now: Date { time.withLock { $0 } }
        func advance(seconds: TimeInterval) { time.withLock { $0 += seconds } }
    }

    private func createKey(_ harness: TestHarness, _ token: String, name: String = "attacker's key") async throws -> String {
        let response = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"\#(name)"}"#, token: token)
        try #require(response.status == .created, "create key answered \(response.status): \(harness.text(response))")
        return try #require(try harness.object(response)["secret"] as? String)
    }

    private func changePassword(_ harness: TestHarness, _ company: TestHarness.Company, token: String, extra: String = "") async throws
        -> TestResponse
    {
        try await harness.request(
            .patch, "/v1/me", json: #"{"currentPassword":"\#(company.password)","newPassword":"the-owners-new-password"\#(extra)}"#,
            token: token)
    }

    private func lastUsedAt(_ harness: TestHarness, _ token: String) async throws -> Date? {
        let page = try harness.object(try await harness.request(.get, "/v1/api-keys", token: token))
        return TestHarness.date((page["items"] as? [[String: Any]])?.first?["lastUsedAt"])
    }

    @Test("a stolen password's key dies when the owner changes the password")
    func stolenPasswordsKeyIsRevoked() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let owner = try await harness.activeCompany(company)
            let attacker = try await harness.logIn(email: company.email, password: company.password)
            let stolen = try await createKey(harness, attacker)
            #expect(try await harness.request(.get, "/v1/me", token: stolen).status == .ok)
            let change = try await changePassword(harness, company, token: owner)
            #expect(change.status == .ok, "\(harness.text(change))")
            #expect(try harness.object(change)["revokedApiKeys"] as? Int == 1)
            #expect(try await harness.request(.get, "/v1/me", token: stolen).status == .unauthorized)
            #expect(try await harness.request(.get, "/v1/me", token: attacker).status == .unauthorized)
            let listed = try harness.object(try await harness.request(.get, "/v1/api-keys", token: owner))["items"] as? [Any]
            #expect(listed?.isEmpty == true)
            #expect(
                try await harness.int(
                    "SELECT count(*) FROM audit_events WHERE action = 'api_key.revoked' AND details->>'reason' = 'password_changed'") == 1)
        }
    }

    /// Whether a request sent while a password change is open has answered.
    final class Answered: Sendable {
        private let flag = Mutex(false)
        var value: Bool { flag.withLock { $0 } }
        func set() { flag.withLock { $0 = true } }
    }

    /// Runs `request` while a password change of `email` is open in the database: the account's row updated
    /// (and so locked), its sessions and keys revoked, not yet committed, as in `AccountService.update`. Once
    /// the request has answered or waits for a lock (10 s at most), the change commits; returns the answer.
    private func duringPasswordChange(
        _ harness: TestHarness, email: String, _ request: @escaping @Sendable () async throws -> HTTPResponse.Status
    ) async throws -> HTTPResponse.Status {
        let logger = TestDatabase.logger
        return try await withDatabase(url: harness.databaseURL.text, logger: logger) { pool in
            try await pool.withConnection { connection in
                let account = "(SELECT id FROM accounts WHERE email = '\(email)')"
                for statement in [
                    "BEGIN",
                    "UPDATE accounts SET password_hash = password_hash || 'x' WHERE email = '\(email)'",
                    "UPDATE sessions SET revoked_at = now() WHERE account_id = \(account) AND revoked_at IS NULL",
                    "UPDATE api_keys SET revoked_at = now() WHERE account_id = \(account) AND revoked_at IS NULL",
                ] {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                let answered = Answered()
                let sent = Task {
                    defer { answered.set() }
                    return try await request()
                }
                for _ in 0..<200 {
                    let waiting = try await harness.int(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
                    if answered.value || waiting > 0 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await connection.query("COMMIT", logger: logger)
                return try await sent.value
            }
        }
    }

    @Test("a key made with a session while a password change revokes that session is refused, and no key survives")
    func keyCreatedDuringPasswordChange() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            try await harness.activeCompany(company)
            let attacker = try await harness.logIn(email: company.email, password: company.password)
            let status = try await duringPasswordChange(harness, email: company.email) {
                try await harness.requestOnNewConnection(.post, "/v1/api-keys", json: #"{"name":"race"}"#, token: attacker).status
            }
            #expect(status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM api_keys") == 0)
        }
    }

    @Test("a key made with a session the password change revoked is refused (401), and none is made")
    func keyWithRevokedSession() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let owner = try await harness.activeCompany(company)
            let attacker = try await harness.logIn(email: company.email, password: company.password)
            #expect(try await changePassword(harness, company, token: owner).status == .ok)
            let response = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"late"}"#, token: attacker)
            #expect(response.status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM api_keys") == 0)
        }
    }

    @Test("a login with the old password while the password changes gets no session that outlives the change")
    func loginDuringPasswordChange() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            try await harness.activeCompany(company)
            let credentials = #"{"email":"\#(company.email)","password":"\#(company.password)"}"#
            let status = try await duringPasswordChange(harness, email: company.email) {
                try await harness.requestOnNewConnection(.post, "/v1/sessions", json: credentials).status
            }
            #expect(status == .unauthorized)
            #expect(try await harness.int("SELECT count(*) FROM sessions WHERE revoked_at IS NULL") == 0)
        }
    }

    @Test("keepApiKeys: true keeps the keys working through a password change")
    func keptKeysWork() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let owner = try await harness.activeCompany(company)
            let key = try await createKey(harness, owner, name: "nightly export")
            let change = try await changePassword(harness, company, token: owner, extra: #","keepApiKeys":true"#)
            #expect(change.status == .ok, "\(harness.text(change))")
            #expect(try harness.object(change)["revokedApiKeys"] as? Int == 0)
            #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok)
        }
    }

    @Test("keepApiKeys without a new password is a 422 naming it, and nothing changes")
    func keepWithoutPasswordIsRefused() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let owner = try await harness.activeCompany(company)
            let key = try await createKey(harness, owner)
            let response = try await harness.request(
                .patch, "/v1/me", json: #"{"companyName":"Renamed S.p.A.","keepApiKeys":false}"#, token: owner)
            #expect(response.status == .unprocessableContent)
            #expect(try harness.errorFields(response) == ["keepApiKeys"])
            #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok)
            #expect(try await harness.int("SELECT count(*) FROM third_parties WHERE company_name = 'Renamed S.p.A.'") == 0)
        }
    }

    @Test("a new key is mailed to its owner, without its secret")
    func creationIsMailed() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let owner = try await harness.activeCompany(company)
            let response = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"nightly export"}"#, token: owner)
            #expect(response.status == .created)
            let key = try harness.object(response)
            let secret = try #require(key["secret"] as? String)
            let prefix = try #require(key["prefix"] as? String)
            let mail = try #require(try await harness.mails().last { $0.contains("To: <\(company.email)>") })
            #expect(mail.contains("Subject: A new API key"), "\(mail)")
            #expect(mail.contains("nightly export"))
            #expect(!mail.contains(secret))
            #expect(!mail.contains(prefix), "not even the part of the secret the list shows")
        }
    }

    @Test("the console's password form revokes a company's keys unless the box is ticked, and says how many")
    func consolePasswordForm() async throws {
        try await TestHarness.run { harness in
            let company = TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber())
            let apiSession = try await harness.activeCompany(company)
            let first = try await createKey(harness, apiSession)
            let second = try await createKey(harness, apiSession, name: "second")
            let browser = ConsoleBrowser(harness)
            #expect(try await browser.logIn(company.email, company.password).status == .seeOther)
            try await browser.get("/account/password")
            #expect(browser.lastPage.contains(#"id="keepApiKeys""#))
            let change = try await browser.post(
                "/account/password", [("currentPassword", company.password), ("newPassword", "the-owners-new-password")])
            #expect(change.status == .seeOther)
            try await browser.get(try #require(change.headers[.location]))
            #expect(browser.lastPage.contains("API keys revoked: 2"), "\(browser.lastPage)")
            for key in [first, second] { #expect(try await harness.request(.get, "/v1/me", token: key).status == .unauthorized) }
            // Ticked, the keys stay.
            let apiAgain = try await harness.logIn(email: company.email, password: "the-owners-new-password")
            let kept = try await createKey(harness, apiAgain, name: "kept")
            try await browser.get("/account/password")
            let keep = try await browser.post(
                "/account/password",
                [("currentPassword", "the-owners-new-password"), ("newPassword", "a-third-password-1"), ("keepApiKeys", "on")])
            #expect(keep.status == .seeOther)
            try await browser.get(try #require(keep.headers[.location]))
            #expect(browser.lastPage.contains("your API keys were kept"), "\(browser.lastPage)")
            #expect(try await harness.request(.get, "/v1/me", token: kept).status == .ok)
        }
    }

    @Test("a person's password form has no API key box")
    func personHasNoKeyBox() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let browser = ConsoleBrowser(harness)
            #expect(try await browser.logIn(person.email, person.password).status == .seeOther)
            try await browser.get("/account/password")
            #expect(browser.lastPage.contains(#"id="password-form""#))
            #expect(!browser.lastPage.contains("keepApiKeys"))
        }
    }

    @Test("a key's last use is stamped at most once a minute, not on every request")
    func lastUseIsNotWrittenOnEveryRequest() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeCompany(TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber()))
            let key = try await createKey(harness, token)
            #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok)
            func stamp() async throws -> String? {
                try await harness.sql("SELECT last_used_at::text FROM api_keys").first?.decode(String?.self)
            }
            let first = try await stamp()
            #expect(first != nil)
            for _ in 1...3 { #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok) }
            #expect(try await stamp() == first)
        }
    }

    @Test("a key's last use comes from the server's clock, to the minute")
    func lastUseFollowsTheClock() async throws {
        let clock = HandClock()
        try await TestHarness.run(configure: { $0.clock = WallClock { clock.now } }) { harness in
            let token = try await harness.activeCompany(TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber()))
            let key = try await createKey(harness, token)
            #expect(try await lastUsedAt(harness, token) == nil)
            let start = clock.now
            #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok)
            #expect(try await lastUsedAt(harness, token) == start)
            clock.advance(seconds: 59)
            #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok)
            #expect(try await lastUsedAt(harness, token) == start, "within the minute the stamp stays")
            clock.advance(seconds: 2)
            #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok)
            #expect(try await lastUsedAt(harness, token) == start.addingTimeInterval(61))
        }
    }
}
