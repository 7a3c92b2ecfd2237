import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 17, items 1-3 in the console and in the background: the console resolves the client's address
/// exactly as the API does, checks passwords through the same throttle, offers the activation mail again;
/// the housekeeping service deletes expired unactivated accounts.
@Suite("Account security in the console and the background")
struct AccountSecurityConsoleTests {
    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// A console sign-in sent through the proxy for `client`.
    private func consoleLogIn(_ browser: ConsoleBrowser, _ email: String, _ password: String, from client: String) async throws -> TestResponse {
        try await browser.get("/login")
        let csrf = try #require(browser.csrfToken)
        let body = "email=\(email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&password=\(password)&_csrf=\(csrf)"
        return try await browser.send(
            .post, "/login", body: ByteBuffer(string: body),
            headers: [.contentType: "application/x-www-form-urlencoded", Self.forwardedFor: client])
    }

    private func apiLogIn(_ harness: TestHarness, _ email: String, _ password: String, from client: String) async throws -> TestResponse {
        try await harness.request(
            .post, "/v1/sessions", json: #"{"email":"\#(email)","password":"\#(password)"}"#, headers: [Self.forwardedFor: client])
    }

    @Test("console sign-ins count against the client named by a trusted proxy, the same bucket as the API's")
    func consoleUsesTheResolvedClientAddress() async throws {
        try await TestHarness.run(configure: {
            $0.loginThrottle.address.freeFailures = 3
            $0.trustedProxies = try! TrustedProxies.parse("127.0.0.1").get()
        }) { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let browser = ConsoleBrowser(harness)
            for attempt in 1...3 {
                let response = try await consoleLogIn(browser, "nobody\(attempt)@example.com", "some-password-1", from: "203.0.113.5")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            #expect(try await apiLogIn(harness, person.email, person.password, from: "203.0.113.5").status == .tooManyRequests)
            #expect(try await apiLogIn(harness, person.email, person.password, from: "198.51.100.1").status == .created)
            let blocked = try await consoleLogIn(ConsoleBrowser(harness), person.email, person.password, from: "203.0.113.5")
            #expect(blocked.status == .tooManyRequests)
        }
    }

    @Test("the console's password change checks the current password through the login throttle")
    func consolePasswordChangeIsThrottled() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let browser = ConsoleBrowser(harness)
            #expect(try await browser.logIn(person.email, person.password).status == .seeOther)
            for attempt in 1...5 {
                try await browser.get("/account/password")
                let response = try await browser.post(
                    "/account/password", [("currentPassword", "guess-number-\(attempt)"), ("newPassword", "attacker-owns-this-1")])
                #expect(response.status == .unprocessableContent, "guess \(attempt)")
            }
            try await browser.get("/account/password")
            let right = try await browser.post(
                "/account/password", [("currentPassword", person.password), ("newPassword", "attacker-owns-this-1")])
            #expect(right.status == .tooManyRequests)
            #expect(browser.lastPage.contains("Too many failed logins"))
        }
    }

    @Test("the console sends the activation mail again, with the same page whatever the email")
    func consoleActivationMailAgain() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            _ = try await harness.request(.post, "/v1/users", json: person.registrationJSON)
            let browser = ConsoleBrowser(harness)
            try await browser.get("/login")
            #expect(browser.lastPage.contains(#"id="activation-mail-link""#))
            try await browser.get("/activation-mail")
            let known = try await browser.post("/activation-mail", [("email", person.email)])
            let knownPage = browser.lastPage.replacingOccurrences(of: person.email, with: "EMAIL")
            try await browser.get("/activation-mail")
            let unknown = try await browser.post("/activation-mail", [("email", "nobody@example.com")])
            let unknownPage = browser.lastPage.replacingOccurrences(of: "nobody@example.com", with: "EMAIL")
            #expect(known.status == .ok && unknown.status == .ok)
            #expect(knownPage.contains(#"id="activation-mail-sent""#))
            #expect(
                knownPage.replacingOccurrences(of: #"value="[^"]*""#, with: "", options: .regularExpression)
                    == unknownPage.replacingOccurrences(of: #"value="[^"]*""#, with: "", options: .regularExpression))
            #expect(try await harness.mails().filter { $0.contains("To: <\(person.email)>") }.count == 2)
            try await harness.activate(email: person.email)
        }
    }

    @Test("the housekeeping service deletes unactivated accounts past 48 hours (audited) and forgets quiet throttle buckets")
    func housekeepingSweeps() async throws {
        try await TestHarness.run(configure: { $0.accountHousekeepingInterval = .milliseconds(200) }) { harness in
            let stale = TestHarness.Person()
            let fresh = TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode())
            _ = try await harness.request(.post, "/v1/users", json: stale.registrationJSON)
            _ = try await harness.request(.post, "/v1/users", json: fresh.registrationJSON)
            _ = try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(fresh.email)","password":"wrong-password-1"}"#)
            _ = try await harness.sql("UPDATE accounts SET created_at = now() - interval '49 hours' WHERE email = '\(stale.email)'")
            _ = try await harness.sql(
                "UPDATE login_throttle SET window_started_at = now() - interval '16 minutes'")
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                let left =
                    try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(stale.email)'")
                    + harness.int("SELECT count(*) FROM login_throttle")
                if left == 0 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(stale.email)'") == 0)
            #expect(try await harness.int("SELECT count(*) FROM accounts WHERE email = '\(fresh.email)'") == 1)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'account.expired'") == 1)
            #expect(try await harness.int("SELECT count(*) FROM login_throttle") == 0)
        }
    }
}
