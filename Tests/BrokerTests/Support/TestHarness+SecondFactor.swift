import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerDomain

/// The second factor as tests use it: enrolling through the API with codes computed as an app computes
/// them, the sign-in's second step, and a confirmed factor set up directly for tests about something else.
extension TestHarness {
    struct Enrolled {
        var totp: TOTP
        var recoveryCodes: [String]
    }

    /// `POST /v1/me/second-factor`, then the confirmation with the new key's code at `date`.
    func enrol(_ token: String, at date: Date = Date(), current: String? = nil) async throws -> Enrolled {
        let totp = try await startEnrolment(token)
        let currentField = current.map { #","currentCode":"\#($0)""# } ?? ""
        let confirmed = try await request(
            .post, "/v1/me/second-factor/confirmation", json: #"{"code":"\#(totp.code(at: date))"\#(currentField)}"#, token: token)
        try #require(confirmed.status == .ok, "confirmation answered \(confirmed.status): \(text(confirmed))")
        let codes = try #require(try object(confirmed)["recoveryCodes"] as? [String])
        return Enrolled(totp: totp, recoveryCodes: codes)
    }

    /// `POST /v1/me/second-factor`: the pending key, read back from its base32 form.
    func startEnrolment(_ token: String) async throws -> TOTP {
        let started = try await request(.post, "/v1/me/second-factor", token: token)
        try #require(started.status == .created, "enrolment answered \(started.status): \(text(started))")
        let secret = try #require(try object(started)["secret"] as? String)
        return TOTP(secret: try #require(Base32.decode(secret)))
    }

    /// `POST /v1/sessions` for an account with a second factor: the challenge (fails unless it answers one).
    func challenge(_ email: String, _ password: String) async throws -> String {
        let response = try await tryLogIn(email, password)
        try #require(response.status == .ok, "login answered \(response.status): \(text(response))")
        return try #require(try object(response)["secondFactorChallenge"] as? String)
    }

    /// `POST /v1/sessions/second-factor`, whatever it answers.
    func secondStep(_ challenge: String, code: String? = nil, recoveryCode: String? = nil, headers: HTTPFields = [:]) async throws
        -> TestResponse
    {
        var fields = [#""challenge":"\#(challenge)""#]
        if let code { fields.append(#""code":"\#(code)""#) }
        if let recoveryCode { fields.append(#""recoveryCode":"\#(recoveryCode)""#) }
        return try await request(.post, "/v1/sessions/second-factor", json: "{" + fields.joined(separator: ",") + "}", headers: headers)
    }

    /// A confirmed factor for `email`, written directly (for tests about something else).
    func enrolDirectly(email: String) async throws {
        let secret = TOTP.generate().secret.map { String(format: "%02x", $0) }.joined()
        _ = try await sql(
            """
            INSERT INTO second_factors (account_id, secret, confirmed_at)
            SELECT id, '\\x\(secret)'::bytea, now() FROM accounts WHERE email = '\(email)'
            """)
    }

    /// The code of `email`'s confirmed key now (the system's time), as the holder's app shows it. Helpers sign
    /// one account in several times within a 30-second step, which the replay rule refuses; for them the
    /// last accepted step is forgotten first (SecondFactorTests test that rule itself, without this).
    func currentCode(email: String, at date: Date = Date()) async throws -> String {
        let row = try #require(
            try await sql(
                """
                UPDATE second_factors f SET last_step = -1 FROM accounts a
                WHERE a.id = f.account_id AND a.email = '\(email)' RETURNING f.secret
                """
            ).first, "\(email) has no second factor")
        return TOTP(secret: try row.decode(Data.self)).code(at: date)
    }
}
