import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Login throttling")
struct LoginThrottleTests {
    private func expire(_ harness: TestHarness) async throws {
        _ = try await harness.sql("UPDATE login_throttle SET blocked_until = now() WHERE blocked_until > now()")
    }

    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    @Test("after five failed logins for an email, even the right password is refused with 429 for about a minute")
    func throttledByEmail() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            try await harness.failLogIns(person.email, 1...5)
            let blocked = try await harness.tryLogIn(person.email, person.password)
            let seconds = try harness.expectThrottled(blocked)
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
                #expect(try await harness.tryLogIn(email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            _ = try harness.expectThrottled(try await harness.tryLogIn(person.email, person.password))
        }
    }

    @Test("each failure after the free ones doubles the delay, up to 15 minutes")
    func delaysGrow() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            try await harness.failLogIns(person.email, 1...5)
            for expected in [120, 240, 480, 900, 900] {
                try await expire(harness)
                #expect(try await harness.tryLogIn(person.email, "still-a-wrong-one").status == .unauthorized)
                let seconds = try harness.expectThrottled(try await harness.tryLogIn(person.email, person.password))
                #expect(seconds.map { (expected - 5...expected).contains($0) } == true, "expected \(expected), Retry-After \(seconds ?? 0)")
            }
            // Once the block is over, the right password logs in and forgives everything.
            try await expire(harness)
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
            #expect(try await harness.int("SELECT count(*) FROM login_throttle WHERE bucket LIKE 'account:%'") == 0)
        }
    }

    @Test("four failures are still allowed: the fifth attempt with the right password logs in")
    func fourFailuresAllowed() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            try await harness.failLogIns(person.email, 1...4)
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
        }
    }

    @Test("a successful login forgives the email's earlier failures")
    func successClearsFailures() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            try await harness.failLogIns(person.email, 1...4)
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
            try await harness.failLogIns(person.email, 5...8)
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
        }
    }

    @Test("a bucket quiet for 15 minutes after its block starts afresh")
    func quietBucketsStartAfresh() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            try await harness.failLogIns(person.email, 1...5)
            _ = try await harness.sql(
                "UPDATE login_throttle SET window_started_at = now() - interval '30 minutes', blocked_until = now() - interval '15 minutes 1 second'")
            // Four fresh free failures, not a sixth one with its two-minute delay.
            try await harness.failLogIns(person.email, 1...4, prefix: "wrong-again-")
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
        }
    }

    @Test("a throttled attempt does not itself count or extend the block")
    func throttledAttemptsAreNotFailures() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            try await harness.failLogIns(person.email, 1...5)
            let before = try await harness.int("SELECT extract(epoch FROM blocked_until)::int8 FROM login_throttle WHERE bucket LIKE 'account:%'")
            for _ in 1...3 {
                _ = try harness.expectThrottled(try await harness.tryLogIn(person.email, "still-wrong-password"))
            }
            #expect(try await harness.int("SELECT failures::int8 FROM login_throttle WHERE bucket LIKE 'account:%'") == 5)
            #expect(
                try await harness.int("SELECT extract(epoch FROM blocked_until)::int8 FROM login_throttle WHERE bucket LIKE 'account:%'") == before)
            #expect(try await harness.int("SELECT failures::int8 FROM login_throttle WHERE bucket LIKE 'address:%'") == 5)
        }
    }

    @Test("one address is blocked only at its own, much higher bar (LOGIN_ADDRESS_MAX_FAILURES)")
    func throttledByClientAddressAtTheBar() async throws {
        try await TestHarness.run(configure: { $0.loginThrottle.address.freeFailures = 12 }) { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...11 {
                let response = try await harness.tryLogIn("nobody\(attempt)@example.com", "some-password-1")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            // A right password gives its place back, so it does not use up the address's bar.
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
            #expect(try await harness.tryLogIn("nobody12@example.com", "some-password-1").status == .unauthorized)
            let seconds = try harness.expectThrottled(try await harness.tryLogIn(person.email, person.password))
            #expect(seconds.map { $0 > 890 } == true, "Retry-After \(seconds ?? 0)")
        }
    }

    @Test("from a peer that is not a trusted proxy, X-Forwarded-For changes nothing")
    func spoofedForwardedForIgnored() async throws {
        try await TestHarness.run(configure: { $0.loginThrottle.address.freeFailures = 5 }) { harness in
            for attempt in 1...5 {
                let response = try await harness.tryLogIn(
                    "nobody\(attempt)@example.com", "some-password-1", headers: [Self.forwardedFor: "198.51.100.\(attempt)"])
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            _ = try harness.expectThrottled(
                try await harness.tryLogIn("nobody6@example.com", "some-password-1", headers: [Self.forwardedFor: "203.0.113.99"]))
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
                let response = try await harness.tryLogIn(
                    "nobody\(attempt)@example.com", "some-password-1", headers: [Self.forwardedFor: "198.51.100.7, 203.0.113.5, 10.1.2.3"])
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            _ = try harness.expectThrottled(try await harness.tryLogIn(person.email, person.password, headers: [Self.forwardedFor: "203.0.113.5"]))
            // Another client behind the same proxy, and the address the attacker wrote, are not blocked.
            #expect(try await harness.tryLogIn(person.email, person.password, headers: [Self.forwardedFor: "198.51.100.7"]).status == .created)
            #expect(try await harness.tryLogIn(person.email, person.password, headers: [Self.forwardedFor: "192.0.2.44"]).status == .created)
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
                let response = try await harness.tryLogIn(
                    "nobody\(attempt)@example.com", "some-password-1", headers: [Self.forwardedFor: "2001:db8:1:2::\(attempt)"])
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            _ = try harness.expectThrottled(
                try await harness.tryLogIn(person.email, person.password, headers: [Self.forwardedFor: "2001:db8:1:2:ffff::9"]))
            // The next /64 is another client.
            #expect(try await harness.tryLogIn(person.email, person.password, headers: [Self.forwardedFor: "2001:db8:1:3::1"]).status == .created)
            #expect(try await harness.int("SELECT failures::int8 FROM login_throttle WHERE bucket = 'address:2001:db8:1:2::/64'") == 5)
        }
    }
}
