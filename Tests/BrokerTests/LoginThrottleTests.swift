import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
@testable import Broker

@Suite("Login throttling")
struct LoginThrottleTests {
    private func tryLogIn(_ harness: TestHarness, _ email: String, _ password: String) async throws -> TestResponse {
        try await harness.request(.post, "/v1/sessions", json: #"{"email":"\#(email)","password":"\#(password)"}"#)
    }

    /// Checks a 429 answer: `Retry-After` a whole number of seconds in 1...900, and a problem document.
    private func expectThrottled(_ response: TestResponse, _ harness: TestHarness) throws -> Int? {
        #expect(response.status == .tooManyRequests)
        #expect(response.headers[.contentType] == "application/problem+json")
        let retryAfter = try #require(response.headers[.retryAfter], "no Retry-After")
        let seconds = try #require(Int(retryAfter), "Retry-After: \(retryAfter)")
        #expect((1...900).contains(seconds))
        #expect(try harness.object(response)["status"] as? Int == 429)
        return seconds
    }

    private func expire(_ harness: TestHarness) async throws {
        _ = try await harness.sql("UPDATE login_throttle SET blocked_until = now() WHERE blocked_until > now()")
    }

    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    private func tryLogIn(_ harness: TestHarness, _ email: String, _ password: String, from forwarded: String) async throws -> TestResponse {
        try await harness.request(
            .post, "/v1/sessions", json: #"{"email":"\#(email)","password":"\#(password)"}"#, headers: [Self.forwardedFor: forwarded])
    }

    @Test("after five failed logins for an email, even the right password is refused with 429 for about a minute")
    func throttledByEmail() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                let response = try await tryLogIn(harness, person.email, "wrong-password-\(attempt)")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            let blocked = try await tryLogIn(harness, person.email, person.password)
            let seconds = try expectThrottled(blocked, harness)
            #expect(seconds.map { (55...60).contains($0) } == true, "the first delay is a minute: Retry-After \(seconds ?? 0)")
            #expect(try await harness.int("SELECT count(*) FROM sessions") == 1)
        }
    }

    @Test("failures for an email count together whatever the letter case")
    func throttledByEmailAnyCase() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                let email = attempt.isMultiple(of: 2) ? person.email.uppercased() : person.email
                #expect(try await tryLogIn(harness, email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            _ = try expectThrottled(try await tryLogIn(harness, person.email, person.password), harness)
        }
    }

    @Test("each failure after the free ones doubles the delay, up to 15 minutes")
    func delaysGrow() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            for expected in [120, 240, 480, 900, 900] {
                try await expire(harness)
                #expect(try await tryLogIn(harness, person.email, "still-a-wrong-one").status == .unauthorized)
                let seconds = try expectThrottled(try await tryLogIn(harness, person.email, person.password), harness)
                #expect(seconds.map { (expected - 5...expected).contains($0) } == true, "expected \(expected), Retry-After \(seconds ?? 0)")
            }
            // Once the block is over, the right password logs in and forgives everything.
            try await expire(harness)
            #expect(try await tryLogIn(harness, person.email, person.password).status == .created)
            #expect(try await harness.int("SELECT count(*) FROM login_throttle WHERE bucket LIKE 'account:%'") == 0)
        }
    }

    @Test("four failures are still allowed: the fifth attempt with the right password logs in")
    func fourFailuresAllowed() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...4 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            #expect(try await tryLogIn(harness, person.email, person.password).status == .created)
        }
    }

    @Test("a successful login forgives the email's earlier failures")
    func successClearsFailures() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...4 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            #expect(try await tryLogIn(harness, person.email, person.password).status == .created)
            for attempt in 5...8 {
                let response = try await tryLogIn(harness, person.email, "wrong-password-\(attempt)")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            #expect(try await tryLogIn(harness, person.email, person.password).status == .created)
        }
    }

    @Test("a bucket quiet for 15 minutes after its block starts afresh")
    func quietBucketsStartAfresh() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            _ = try await harness.sql(
                "UPDATE login_throttle SET window_started_at = now() - interval '30 minutes', blocked_until = now() - interval '15 minutes 1 second'")
            // Four fresh free failures, not a sixth one with its two-minute delay.
            for attempt in 1...4 {
                #expect(try await tryLogIn(harness, person.email, "wrong-again-\(attempt)").status == .unauthorized)
            }
            #expect(try await tryLogIn(harness, person.email, person.password).status == .created)
        }
    }

    @Test("a throttled attempt does not itself count or extend the block")
    func throttledAttemptsAreNotFailures() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            let before = try await harness.int("SELECT extract(epoch FROM blocked_until)::int8 FROM login_throttle WHERE bucket LIKE 'account:%'")
            for _ in 1...3 {
                _ = try expectThrottled(try await tryLogIn(harness, person.email, "still-wrong-password"), harness)
            }
            #expect(try await harness.int("SELECT failures::int8 FROM login_throttle WHERE bucket LIKE 'account:%'") == 5)
            #expect(try await harness.int("SELECT extract(epoch FROM blocked_until)::int8 FROM login_throttle WHERE bucket LIKE 'account:%'") == before)
            #expect(try await harness.int("SELECT failures::int8 FROM login_throttle WHERE bucket LIKE 'address:%'") == 5)
        }
    }

    @Test("one address is blocked only at its own, much higher bar (LOGIN_ADDRESS_MAX_FAILURES)")
    func throttledByClientAddressAtTheBar() async throws {
        try await TestHarness.run(configure: { $0.loginThrottle.address.freeFailures = 12 }) { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...11 {
                let response = try await tryLogIn(harness, "nobody\(attempt)@example.com", "some-password-1")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            // A right password gives its place back, so it does not use up the address's bar.
            #expect(try await tryLogIn(harness, person.email, person.password).status == .created)
            #expect(try await tryLogIn(harness, "nobody12@example.com", "some-password-1").status == .unauthorized)
            let seconds = try expectThrottled(try await tryLogIn(harness, person.email, person.password), harness)
            #expect(seconds.map { $0 > 890 } == true, "Retry-After \(seconds ?? 0)")
        }
    }

    @Test("from a peer that is not a trusted proxy, X-Forwarded-For changes nothing")
    func spoofedForwardedForIgnored() async throws {
        try await TestHarness.run(configure: { $0.loginThrottle.address.freeFailures = 5 }) { harness in
            for attempt in 1...5 {
                let response = try await tryLogIn(harness, "nobody\(attempt)@example.com", "some-password-1", from: "198.51.100.\(attempt)")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            _ = try expectThrottled(try await tryLogIn(harness, "nobody6@example.com", "some-password-1", from: "203.0.113.99"), harness)
            #expect(try await harness.int("SELECT count(*) FROM login_throttle WHERE bucket = 'address:127.0.0.1'") == 1)
        }
    }

    @Test("behind a trusted proxy, the right-most X-Forwarded-For entry that is not a proxy is the client")
    func trustedProxyNamesTheClient() async throws {
        try await TestHarness.run(configure: {
            $0.loginThrottle.address.freeFailures = 5
            $0.trustedProxies = try! TrustedProxies.parse("10.0.0.0/8, 127.0.0.1").get()
        }) { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            // The attacker writes a victim's address at the left; the proxies append the real one.
            for attempt in 1...5 {
                let response = try await tryLogIn(
                    harness, "nobody\(attempt)@example.com", "some-password-1", from: "198.51.100.7, 203.0.113.5, 10.1.2.3")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            _ = try expectThrottled(try await tryLogIn(harness, person.email, person.password, from: "203.0.113.5"), harness)
            // Another client behind the same proxy, and the address the attacker wrote, are not blocked.
            #expect(try await tryLogIn(harness, person.email, person.password, from: "198.51.100.7").status == .created)
            #expect(try await tryLogIn(harness, person.email, person.password, from: "192.0.2.44").status == .created)
            #expect(try await harness.int("SELECT failures::int8 FROM login_throttle WHERE bucket = 'address:203.0.113.5'") == 5)
        }
    }

    @Test("an IPv6 client's addresses count as its /64: rotating through them does not escape the address bar")
    func ipv6ClientsAreTheirSlash64() async throws {
        try await TestHarness.run(configure: {
            $0.loginThrottle.address.freeFailures = 5
            $0.trustedProxies = try! TrustedProxies.parse("127.0.0.1").get()
        }) { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            // Five guesses at five accounts, each from a fresh address of one /64.
            for attempt in 1...5 {
                let response = try await tryLogIn(harness, "nobody\(attempt)@example.com", "some-password-1", from: "2001:db8:1:2::\(attempt)")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            _ = try expectThrottled(try await tryLogIn(harness, person.email, person.password, from: "2001:db8:1:2:ffff::9"), harness)
            // The next /64 is another client.
            #expect(try await tryLogIn(harness, person.email, person.password, from: "2001:db8:1:3::1").status == .created)
            #expect(try await harness.int("SELECT failures::int8 FROM login_throttle WHERE bucket = 'address:2001:db8:1:2::/64'") == 5)
        }
    }
}
