import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// Issue 30, item 2: a second factor (TOTP, RFC 6238). Every code a test sends is computed here as an
/// authenticator app computes it, from the key the server handed out, at the server's (manual) clock.
@Suite("Second factor")
struct SecondFactorTests {
    /// Codes move with the server's clock, which the test moves by whole 30-second steps.
    static func clocked(_ clock: ManualClock) -> @Sendable (inout BrokerConfiguration) -> Void {
        { $0.clock = clock.wall }
    }

    @Test("the codes are RFC 6238's (appendix B, SHA-1, cut to six digits) and base32 is RFC 4648's")
    func rfcVectors() throws {
        let totp = TOTP(secret: Data("12345678901234567890".utf8))
        let vectors: [(TimeInterval, String)] = [
            (59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"),
            (2_000_000_000, "279037"), (20_000_000_000, "353130"),
        ]
        for (seconds, code) in vectors {
            #expect(totp.code(at: Date(timeIntervalSince1970: seconds)) == code, "T = \(seconds)")
        }
        #expect(Base32.encode(Data("12345678901234567890".utf8)) == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(Base32.decode("gezdgnbvgy3tqojqgezdgnbvgy3tqojq") == Data("12345678901234567890".utf8))
        #expect(Base32.encode(Data("foobar".utf8)) == "MZXW6YTBOI")
        // A code of the step before or after is accepted (a phone a few seconds off); two steps away is not.
        let at = Date(timeIntervalSince1970: 1_111_111_111)
        #expect(totp.matchingStep(of: totp.code(at: at.addingTimeInterval(-30)), at: at) == TOTP.step(at: at) - 1)
        #expect(totp.matchingStep(of: totp.code(at: at.addingTimeInterval(30)), at: at) == TOTP.step(at: at) + 1)
        #expect(totp.matchingStep(of: totp.code(at: at.addingTimeInterval(90)), at: at) == nil)
        #expect(totp.matchingStep(of: "05047", at: at) == nil)
        #expect(totp.matchingStep(of: "O50471", at: at) == nil)
    }

    @Test("enrolling: a key as base32, otpauth URI and QR code; pending changes nothing; confirmed, sign-in takes a code")
    func enrolAndSignIn() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let off = try harness.object(try await harness.request(.get, "/v1/me/second-factor", token: token))
            #expect(off["enabled"] as? Bool == false)
            #expect(off["required"] as? Bool == false)

            let started = try await harness.request(.post, "/v1/me/second-factor", token: token)
            #expect(started.status == .created)
            let enrolment = try harness.object(started)
            let secret = try #require(enrolment["secret"] as? String)
            let uri = try #require(enrolment["uri"] as? String)
            #expect(uri.hasPrefix("otpauth://totp/Data4Help:"))
            #expect(uri.contains("secret=\(secret)&issuer=Data4Help"))
            #expect(try #require(enrolment["qrCodeSvg"] as? String).hasPrefix("<svg"))
            let totp = TOTP(secret: try #require(Base32.decode(secret)))
            #expect(totp.secret.count == 20)

            // Pending: the password alone still signs in, and nothing about a factor is on.
            #expect(try await harness.tryLogIn(person.email, person.password).status == .created)
            #expect(try harness.object(try await harness.request(.get, "/v1/me/second-factor", token: token))["pendingEnrolment"] as? Bool == true)

            let wrong = try await harness.request(
                .post, "/v1/me/second-factor/confirmation", json: #"{"code":"\#(Self.wrongCode(totp, clock))"}"#, token: token)
            #expect(wrong.status == .unprocessableContent)
            #expect(try harness.errorFields(wrong) == ["code"])
            let confirmed = try await harness.request(
                .post, "/v1/me/second-factor/confirmation", json: #"{"code":"\#(totp.code(at: clock.wall.now))"}"#, token: token)
            #expect(confirmed.status == .ok)
            let codes = try #require(try harness.object(confirmed)["recoveryCodes"] as? [String])
            #expect(codes.count == 10)
            #expect(Set(codes).count == 10)
            #expect(codes.allSatisfy { $0.wholeMatch(of: /[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}/) != nil })
            // Only their hashes are kept.
            #expect(try await harness.int("SELECT count(*) FROM recovery_codes WHERE code_hash = sha256(convert_to('\(codes[0])', 'UTF8'))") == 0)
            #expect(try await harness.int("SELECT count(*) FROM recovery_codes") == 10)
            let on = try harness.object(try await harness.request(.get, "/v1/me/second-factor", token: token))
            #expect(on["enabled"] as? Bool == true)
            #expect(on["unusedRecoveryCodes"] as? Int == 10)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'second_factor.enabled'") == 1)

            // The password now gives a challenge, not a session.
            let sessionsBefore = try await harness.int("SELECT count(*) FROM sessions")
            let challenge = try await harness.challenge(person.email, person.password)
            #expect(challenge.hasPrefix("d4hc_"))
            #expect(try await harness.int("SELECT count(*) FROM sessions") == sessionsBefore)
            #expect(try await harness.request(.get, "/v1/me", token: challenge).status == .unauthorized)
            // The code that confirmed the key is used up; the next step's code signs in.
            #expect(try await harness.secondStep(challenge, code: totp.code(at: clock.wall.now)).status == .unauthorized)
            clock.advance(by: .seconds(30))
            let signedIn = try await harness.secondStep(challenge, code: totp.code(at: clock.wall.now))
            #expect(signedIn.status == .created)
            let session = try #require(try harness.object(signedIn)["token"] as? String)
            #expect(try await harness.request(.get, "/v1/me", token: session).status == .ok)
            // The challenge gave its one session.
            clock.advance(by: .seconds(30))
            #expect(try await harness.secondStep(challenge, code: totp.code(at: clock.wall.now)).status == .unauthorized)
        }
    }

    @Test("the QR code the server draws decodes (zbarimg) to the otpauth URI")
    func qrCodeDecodes() async throws {
        let uri = TOTP.generate().uri(issuer: "Data4Help", account: "someone+tag@example.com")
        let svg = try QRCode.svg(uri)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let svgFile = directory.appendingPathComponent("code.svg")
        let pngFile = directory.appendingPathComponent("code.png")
        try Data(svg.utf8).write(to: svgFile)
        let converted = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/rsvg-convert"), ["--format=png", "--output", pngFile.path, svgFile.path])
        try #require(converted.status == 0, "rsvg-convert (librsvg2-bin, `make deps`): \(converted.output)")
        let decoded = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/zbarimg"), ["--quiet", "--raw", pngFile.path])
        try #require(decoded.status == 0, "zbarimg (zbar-tools, `make deps`): \(decoded.output)")
        // stdout and stderr come together, and zbarimg may complain on stderr of a missing D-Bus: the decoded line.
        let lines = decoded.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.filter { $0.hasPrefix("otpauth:") } == [uri], "\(decoded.output)")
    }

    @Test("attack: a replayed code is refused, also by two sign-ins sending it at once")
    func replayedCode() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let person = TestHarness.Person()
            let enrolled = try await harness.enrol(try await harness.activeUser(person), at: clock.wall.now)
            clock.advance(by: .seconds(30))
            let code = enrolled.totp.code(at: clock.wall.now)
            #expect(try await harness.secondStep(try await harness.challenge(person.email, person.password), code: code).status == .created)
            // Someone who saw the code type it again, within its window, on a sign-in of their own.
            let replay = try await harness.secondStep(try await harness.challenge(person.email, person.password), code: code)
            #expect(replay.status == .unauthorized)
            #expect(try harness.object(replay)["type"] as? String == "https://data4help.example/problems/wrong-second-factor")
            // An earlier step's code, still within the window, is no better.
            let earlier = enrolled.totp.code(at: clock.wall.now.addingTimeInterval(-30))
            #expect(try await harness.secondStep(try await harness.challenge(person.email, person.password), code: earlier).status == .unauthorized)

            // Two sign-ins with the next code at the same moment: one session, not two.
            clock.advance(by: .seconds(30))
            let next = enrolled.totp.code(at: clock.wall.now)
            let challenges = [try await harness.challenge(person.email, person.password), try await harness.challenge(person.email, person.password)]
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for challenge in challenges { group.addTask { try await harness.secondStep(challenge, code: next).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == .unauthorized }.count == 1, "\(statuses)")
        }
    }

    @Test("attack: after re-enrolling, a code from the previous key is refused; a pending re-enrolment changes nothing")
    func previousSecret() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let first = try await harness.enrol(token, at: clock.wall.now)
            clock.advance(by: .seconds(30))
            let second = try await harness.startEnrolment(token)
            // Pending: the old key still signs in, the new one does not.
            let pending = try await harness.challenge(person.email, person.password)
            #expect(try await harness.secondStep(pending, code: second.code(at: clock.wall.now)).status == .unauthorized)
            #expect(try await harness.secondStep(pending, code: first.totp.code(at: clock.wall.now)).status == .created)
            // Replacing the factor needs a code of the one in force, not just the session.
            clock.advance(by: .seconds(30))
            let withoutCurrent = try await harness.request(
                .post, "/v1/me/second-factor/confirmation", json: #"{"code":"\#(second.code(at: clock.wall.now))"}"#, token: token)
            #expect(withoutCurrent.status == .unprocessableContent)
            #expect(try harness.errorFields(withoutCurrent) == ["currentCode"])
            let replaced = try await harness.request(
                .post, "/v1/me/second-factor/confirmation",
                json: #"{"code":"\#(second.code(at: clock.wall.now))","currentCode":"\#(first.totp.code(at: clock.wall.now))"}"#, token: token)
            #expect(replaced.status == .ok)

            clock.advance(by: .seconds(30))
            let challenge = try await harness.challenge(person.email, person.password)
            #expect(try await harness.secondStep(challenge, code: first.totp.code(at: clock.wall.now)).status == .unauthorized)
            // The old key's recovery codes went with it.
            #expect(try await harness.secondStep(challenge, recoveryCode: first.recoveryCodes[0]).status == .unauthorized)
            #expect(try await harness.secondStep(challenge, code: second.code(at: clock.wall.now)).status == .created)
            #expect(try await harness.int("SELECT count(*) FROM recovery_codes") == 10)
        }
    }

    @Test("attack: 30 concurrent wrong codes on one challenge are all counted; the right code is then refused too")
    func concurrentWrongCodes() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let person = TestHarness.Person()
            let enrolled = try await harness.enrol(try await harness.activeUser(person), at: clock.wall.now)
            clock.advance(by: .seconds(30))
            let challenge = try await harness.challenge(person.email, person.password)
            let wrong = Self.wrongCode(enrolled.totp, clock)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<30 { group.addTask { try await harness.secondStep(challenge, code: wrong).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Five free failures per account (LOGIN_ACCOUNT_FREE_ATTEMPTS); every other guess is refused unchecked.
            #expect(statuses.filter { $0 == .unauthorized }.count == 5, "\(statuses)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 25, "\(statuses)")
            try harness.expectThrottled(try await harness.secondStep(challenge, code: enrolled.totp.code(at: clock.wall.now)))
            // A right password does not wipe the count of wrong codes.
            let again = try await harness.challenge(person.email, person.password)
            try harness.expectThrottled(try await harness.secondStep(again, code: enrolled.totp.code(at: clock.wall.now)))
            #expect(try await harness.int("SELECT count(*) FROM sessions") == 1)
        }
    }

    @Test("attack: a recovery code signs in once; typed in lower case without hyphens it is the same code")
    func recoveryCodeTwice() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let enrolled = try await harness.enrol(token, at: clock.wall.now)
            let code = enrolled.recoveryCodes[3]
            #expect(try await harness.secondStep(try await harness.challenge(person.email, person.password), recoveryCode: code).status == .created)
            let typed = code.lowercased().replacingOccurrences(of: "-", with: " ")
            #expect(
                try await harness.secondStep(try await harness.challenge(person.email, person.password), recoveryCode: typed).status == .unauthorized)
            #expect(try harness.object(try await harness.request(.get, "/v1/me/second-factor", token: token))["unusedRecoveryCodes"] as? Int == 9)
            let other = enrolled.recoveryCodes[4].lowercased().replacingOccurrences(of: "-", with: "")
            #expect(try await harness.secondStep(try await harness.challenge(person.email, person.password), recoveryCode: other).status == .created)
            // Both a code and a recovery code, or neither: a clear 422.
            let both = try await harness.secondStep(
                try await harness.challenge(person.email, person.password), code: "123456", recoveryCode: enrolled.recoveryCodes[5])
            #expect(both.status == .unprocessableContent)
            #expect(try await harness.secondStep("d4hc_nothing").status == .unprocessableContent)
        }
    }

    @Test("attack: an auditor with a password but no factor gets 403 second-factor-required from every auditor operation until enrolled")
    func auditorMustEnrol() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let (email, password) = try await harness.unenrolledAuditor()
            // Whoever else knew the password signed in first: held at the gate, like the auditor.
            let intruder = try await harness.logIn(email: email, password: password)
            let token = try await harness.logIn(email: email, password: password)
            let operations = try OpenAPIOperations.load().filter { $0.roles?.contains("auditor") == true }
            let enrolment: Set<String> = [
                "GET /v1/me", "GET /v1/me/second-factor", "POST /v1/me/second-factor", "POST /v1/me/second-factor/confirmation",
                "DELETE /v1/sessions/current", "DELETE /v1/me/second-factor",
            ]
            let gated = operations.filter { !enrolment.contains($0.key) }
            #expect(gated.count >= 10, "\(gated)")
            let ids = ["id": UUID().uuidString.lowercased(), "seq": "1"]
            for operation in gated {
                let response = try await harness.request(
                    HTTPRequest.Method(operation.method)!, operation.path(with: ids) + operation.requiredQueryString,
                    json: operation.body?.contentType == "application/json" ? operation.body?.decodable : nil, token: token)
                #expect(response.status == .forbidden, "\(operation)")
                #expect(
                    (try? harness.object(response)["type"] as? String) == "https://data4help.example/problems/second-factor-required",
                    "\(operation)")
            }
            let status = try harness.object(try await harness.request(.get, "/v1/me/second-factor", token: token))
            #expect(status["required"] as? Bool == true)
            #expect(status["enabled"] as? Bool == false)
            // A pending enrolment is not enough.
            let totp = try await harness.startEnrolment(token)
            #expect(try await harness.request(.get, "/v1/audit/events", token: token).status == .forbidden)
            let confirmed = try await harness.request(
                .post, "/v1/me/second-factor/confirmation", json: #"{"code":"\#(totp.code(at: clock.wall.now))"}"#, token: token)
            #expect(confirmed.status == .ok)
            // The same session works as soon as the factor is confirmed.
            #expect(try await harness.request(.get, "/v1/audit/events", token: token).status == .ok)
            // Every other session opened with the password alone ended with the enrolment: it would pass the gate now.
            #expect(try await harness.request(.get, "/v1/audit/events", token: intruder).status == .unauthorized)
            // Turning it off puts the auditor back behind the gate.
            clock.advance(by: .seconds(30))
            let off = try await harness.request(.delete, "/v1/me/second-factor", json: #"{"code":"\#(totp.code(at: clock.wall.now))"}"#, token: token)
            #expect(off.status == .noContent)
            #expect(try await harness.request(.get, "/v1/audit/events", token: token).status == .forbidden)
        }
    }

    @Test("turning the factor off needs a current code; API keys are not affected by the second factor")
    func disableAndAPIKeys() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let company = TestHarness.Company()
            let token = try await harness.activeCompany(company)
            let key = try #require(
                try harness.object(try await harness.request(.post, "/v1/api-keys", json: "{}", token: token))["secret"] as? String)
            let enrolled = try await harness.enrol(token, at: clock.wall.now)
            // The key goes on working, without a code; but it cannot manage the factor.
            #expect(try await harness.request(.get, "/v1/me", token: key).status == .ok)
            #expect(try await harness.request(.post, "/v1/me/second-factor", token: key).status == .forbidden)
            #expect(try await harness.request(.delete, "/v1/me/second-factor", json: #"{"code":"000000"}"#, token: key).status == .forbidden)

            let missing = try await harness.request(.delete, "/v1/me/second-factor", json: "{}", token: token)
            #expect(missing.status == .unprocessableContent)
            let wrong = try await harness.request(
                .delete, "/v1/me/second-factor", json: #"{"code":"\#(Self.wrongCode(enrolled.totp, clock))"}"#, token: token)
            #expect(wrong.status == .unprocessableContent)
            #expect(try harness.errorFields(wrong) == ["code"])
            // The code that confirmed the factor is used up.
            let used = try await harness.request(
                .delete, "/v1/me/second-factor", json: #"{"code":"\#(enrolled.totp.code(at: clock.wall.now))"}"#, token: token)
            #expect(used.status == .unprocessableContent)
            #expect(try await harness.int("SELECT count(*) FROM second_factors WHERE secret IS NOT NULL") == 1)
            let off = try await harness.request(
                .delete, "/v1/me/second-factor", json: #"{"recoveryCode":"\#(enrolled.recoveryCodes[0])"}"#, token: token)
            #expect(off.status == .noContent)
            #expect(try await harness.int("SELECT count(*) FROM recovery_codes") == 0)
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'second_factor.disabled'") == 1)
            #expect(try await harness.tryLogIn(company.email, company.password).status == .created)
            #expect(try await harness.request(.delete, "/v1/me/second-factor", json: #"{"code":"000000"}"#, token: token).status == .conflict)
        }
    }

    @Test("console: an auditor is led to enrolment, enrols by the QR page's key, then signs in with a code")
    func consoleAuditorEnrols() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let (email, password) = try await harness.unenrolledAuditor()
            let browser = ConsoleBrowser(harness)
            let signedIn = try await browser.logIn(email, password)
            #expect(signedIn.headers[.location]?.hasPrefix("/audit") == true)
            let audit = try await browser.get("/audit")
            #expect(audit.status == .seeOther)
            #expect(audit.headers[.location] == "/account/second-factor?notice=second-factor-required")
            try await browser.get("/account/second-factor")
            #expect(browser.lastPage.contains("Auditors must"))
            let started = try await browser.post("/account/second-factor/enrol", [])
            #expect(started.headers[.location] == "/account/second-factor/confirm")
            try await browser.get("/account/second-factor/confirm")
            #expect(browser.lastPage.contains("<svg"))
            let page = browser.lastPage
            let range = try #require(page.range(of: #"<code id="second-factor-secret">"#))
            let secret = String(page[range.upperBound...].prefix { $0 != "<" })
            let totp = TOTP(secret: try #require(Base32.decode(secret)))
            let wrong = try await browser.post("/account/second-factor/confirm", [("code", Self.wrongCode(totp, clock))])
            #expect(wrong.status == .unprocessableContent)
            #expect(browser.lastPage.contains("<svg"))
            let confirmed = try await browser.post("/account/second-factor/confirm", [("code", totp.code(at: clock.wall.now))])
            #expect(confirmed.status == .ok)
            #expect(browser.lastPage.contains(#"id="recovery-codes""#))
            #expect(try await browser.get("/audit").status == .ok)

            // Signing in again takes both steps; a wrong code shows the form again.
            clock.advance(by: .seconds(30))
            let again = ConsoleBrowser(harness)
            try await again.get("/login")
            let first = try await again.post("/login", [("email", email), ("password", password)])
            #expect(first.headers[.location] == "/login/second-factor")
            #expect(again.cookies["d4h_session"] == nil)
            try await again.get("/login/second-factor")
            let refused = try await again.post("/login/second-factor", [("code", Self.wrongCode(totp, clock))])
            #expect(refused.status == .unauthorized)
            #expect(again.lastPage.contains(#"id="second-factor-form""#))
            let done = try await again.post("/login/second-factor", [("code", totp.code(at: clock.wall.now))])
            #expect(done.headers[.location] == "/audit?notice=signed-in")
            #expect(try await again.get("/audit").status == .ok)
        }
    }

    @Test("a challenge ends with a password change and at its expiry; a right code does not revive it")
    func challengeLifetime() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: Self.clocked(clock)) { harness in
            let person = TestHarness.Person()
            let token = try await harness.activeUser(person)
            let enrolled = try await harness.enrol(token, at: clock.wall.now)
            let stale = try await harness.challenge(person.email, person.password)
            let expired = try await harness.challenge(person.email, person.password)
            _ = try await harness.sql(
                "UPDATE second_factor_challenges SET expires_at = now() - interval '1 second' WHERE token_hash = sha256(convert_to('\(expired)', 'UTF8'))"
            )
            clock.advance(by: .seconds(30))
            #expect(try await harness.secondStep(expired, code: enrolled.totp.code(at: clock.wall.now)).status == .unauthorized)
            let changed = try await harness.request(
                .patch, "/v1/me", json: #"{"currentPassword":"\#(person.password)","newPassword":"another-password-42"}"#, token: token)
            #expect(changed.status == .ok)
            #expect(try await harness.secondStep(stale, code: enrolled.totp.code(at: clock.wall.now)).status == .unauthorized)
            // Neither refusal used the step up: the new password's sign-in takes the same code.
            let fresh = try await harness.challenge(person.email, "another-password-42")
            #expect(try await harness.secondStep(fresh, code: enrolled.totp.code(at: clock.wall.now)).status == .created)
        }
    }

    /// Six digits that are no code of the window around the server's now.
    static func wrongCode(_ totp: TOTP, _ clock: ManualClock) -> String {
        let now = clock.wall.now
        let window = Set((-1...1).map { totp.code(at: now.addingTimeInterval(Double($0 * 30))) })
        return (0..<1_000_000).lazy.map { String(format: "%06d", $0) }.first { !window.contains($0) }!
    }
}
