import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Issue 17, items 1 and 2, as an attacker tries them: only the public API, default settings.
@Suite("Password guessing attacks")
struct PasswordGuessAttackTests {
    @Test("thirty concurrent wrong passwords for one account: only the five free attempts are evaluated")
    func concurrentGuessesCannotOutrunTheLimit() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let body = #"{"email":"\#(person.email)","password":"a-wrong-guess-1"}"#
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<30 { group.addTask { try await harness.requestOnNewConnection(.post, "/v1/sessions", json: body).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .unauthorized }.count == 5, "\(statuses.map(\.code))")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 25, "\(statuses.map(\.code))")
            try harness.expectThrottled(try await harness.tryLogIn(person.email, person.password), "the right password, after the burst")
        }
    }

    @Test("failures over many accounts from one address do not lock a legitimate user out from that address")
    func oneAddressCannotLockOutEveryone() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            // Every client behind the recommended TLS proxy has its address; twenty failures well below the
            // per-address bar, over twenty other emails.
            for attempt in 1...20 {
                let response = try await harness.tryLogIn("nobody\(attempt)@example.com", "some-password-1")
                #expect(response.status == .unauthorized, "attempt \(attempt)")
            }
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
        }
    }

    @Test("an email that names no account is throttled exactly like one that does")
    func unknownEmailThrottledTheSame() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            try await harness.activeUser(person)
            let unknown = "nobody.\(UUID().uuidString.prefix(8).lowercased())@example.com"
            for attempt in 1...5 {
                #expect(try await harness.tryLogIn(person.email, "wrong-\(attempt)-pass").status == .unauthorized)
                #expect(try await harness.tryLogIn(unknown, "wrong-\(attempt)-pass").status == .unauthorized)
            }
            let known = try await harness.tryLogIn(person.email, "wrong-6-pass")
            let nobody = try await harness.tryLogIn(unknown, "wrong-6-pass")
            try harness.expectThrottled(known)
            try harness.expectThrottled(nobody)
            // The same delay (the two blocks began a moment apart, so the seconds may differ by one).
            let waits = [known, nobody].compactMap { $0.headers[.retryAfter].flatMap { Int($0) } }
            #expect(waits.count == 2 && abs(waits[0] - waits[1]) <= 1, "Retry-After \(waits)")
        }
    }

    @Test("with a stolen session, currentPassword guesses on PATCH /v1/me are throttled like logins")
    func currentPasswordGuessesThrottled() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            for attempt in 1...5 {
                let response = try await harness.request(
                    .patch, "/v1/me", json: #"{"currentPassword":"guess-number-\#(attempt)","newPassword":"attacker-owns-this-1"}"#, token: token)
                #expect(response.status == .unprocessableContent, "guess \(attempt)")
            }
            let right = try await harness.request(
                .patch, "/v1/me", json: #"{"currentPassword":"\#(person.password)","newPassword":"attacker-owns-this-1"}"#, token: token)
            try harness.expectThrottled(right, "the sixth guess is not evaluated, even when right")
            // Nothing changed: the old password is still the password (once the block is over).
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'account.password_changed'") == 0)
        }
    }

    @Test("with a stolen session, password guesses on DELETE /v1/me are throttled like logins")
    func erasurePasswordGuessesThrottled() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            for attempt in 1...5 {
                let response = try await harness.request(.delete, "/v1/me", json: #"{"password":"guess-number-\#(attempt)"}"#, token: token)
                #expect(response.status == .unprocessableContent, "guess \(attempt)")
            }
            let right = try await harness.request(.delete, "/v1/me", json: #"{"password":"\#(person.password)"}"#, token: token)
            try harness.expectThrottled(right)
            #expect(try await harness.request(.get, "/v1/me", token: token).status == .ok, "the account is still there")
        }
    }

    @Test("guesses through PATCH /v1/me and through logins count together for the account")
    func guessesCountTogether() async throws {
        try await TestHarness.run { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            for attempt in 1...3 {
                #expect(try await harness.tryLogIn(person.email, "wrong-\(attempt)-pass").status == .unauthorized)
            }
            for attempt in 4...5 {
                let response = try await harness.request(
                    .patch, "/v1/me", json: #"{"currentPassword":"guess-number-\#(attempt)","newPassword":"attacker-owns-this-1"}"#, token: token)
                #expect(response.status == .unprocessableContent)
            }
            try harness.expectThrottled(try await harness.tryLogIn(person.email, person.password))
        }
    }
}
