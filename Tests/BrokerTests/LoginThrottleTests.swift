import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

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

    @Test("after five failed logins for an email, even the right password is refused with 429 and Retry-After")
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
            #expect(seconds.map { $0 > 850 } == true, "the five failures just happened: Retry-After \(seconds ?? 0)")
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

    @Test("five failures from one client over five different emails block a sixth email from that client")
    func throttledByClientAddress() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                let response = try await tryLogIn(harness, "nobody\(attempt)@example.com", "some-password-1")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            // An account with no failures of its own, with its right password, from the same client.
            _ = try expectThrottled(try await tryLogIn(harness, person.email, person.password), harness)
            _ = try expectThrottled(try await tryLogIn(harness, "nobody6@example.com", "some-password-1"), harness)
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

    @Test("failures older than 15 minutes no longer count")
    func oldFailuresExpire() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            _ = try expectThrottled(try await tryLogIn(harness, person.email, person.password), harness)
            _ = try await harness.sql("UPDATE failed_logins SET at = now() - interval '15 minutes 1 second'")
            #expect(try await tryLogIn(harness, person.email, person.password).status == .created)
        }
    }

    @Test("Retry-After says when the oldest counted failure leaves the 15-minute window")
    func retryAfterFollowsTheWindow() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            _ = try await harness.sql("UPDATE failed_logins SET at = now() - interval '14 minutes'")
            let seconds = try expectThrottled(try await tryLogIn(harness, person.email, person.password), harness)
            #expect(seconds.map { (50...61).contains($0) } == true, "Retry-After \(seconds ?? 0)")
        }
    }

    @Test("a throttled attempt does not itself extend the block")
    func throttledAttemptsAreNotFailures() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            for attempt in 1...5 {
                #expect(try await tryLogIn(harness, person.email, "wrong-password-\(attempt)").status == .unauthorized)
            }
            for _ in 1...3 {
                _ = try expectThrottled(try await tryLogIn(harness, person.email, "still-wrong-password"), harness)
            }
            #expect(try await harness.int("SELECT count(*) FROM failed_logins") == 5)
        }
    }
}
