import Foundation
import Logging
import PostgresNIO

/// Logging in and out, and resolving a bearer token to its caller.
extension AccountService {
    package struct NewSession: Sendable {
        package var token: SecretToken
        package var accountID: UUID
        package var role: Role
        package var expiresAt: Date
    }

    /// What a right password gives: a session, or, when the account has a confirmed second factor, the
    /// challenge its code completes (`completeLogIn`).
    package enum LogInOutcome: Sendable {
        case session(NewSession)
        case secondFactorRequired(SecondFactorChallenge)
    }

    package func logIn(email rawEmail: String, password: String, clientAddress: String, logger: Logger) async throws
        -> LogInOutcome
    {
        // An email that is not an address cannot name an account, but it is still a failed attempt from
        // this client: it shares one throttle bucket ("") and costs the same decoy verification.
        let email = (try? EmailAddress.parse(rawEmail).get())?.value ?? ""
        // Reserved before the password is checked, so a burst of guesses cannot all pass the check.
        let attempt = try await throttle.reserve(email: email, clientAddress: clientAddress, logger: logger)
        let record =
            email.isEmpty ? nil : try await client.withConnection { try await AccountStore.loginRecord(email: email, on: $0, logger: logger) }
        // No valid password is longer than the policy allows; don't let a huge one buy a long hash.
        let plausible = password.count <= PasswordPolicy.maximumLength
        let matches =
            try await hasher.verify(plausible ? password : "", against: record?.passwordHash ?? timingDecoyHash)
            && plausible
        // A wrong password keeps its reserved place: that is the recorded failure.
        guard let record, record.passwordHash != nil, matches else { throw AccountError.wrongCredentials }
        try await throttle.forgive(attempt, logger: logger)
        guard record.status == .active else { throw AccountError.notActivated }
        // The password was checked against a hash read on another connection. A password change committed
        // since, or committing now, revokes the account's sessions before this one exists, so it would
        // outlive the change; the account's row lock (the change updates that row) orders the two, and the
        // session is made only if the hash is still the one the password matched.
        // An account with a confirmed second factor gets a challenge instead, tied to the same hash; a pending
        // enrolment changes nothing. Read under the same row lock, so a factor confirmed meanwhile counts.
        let created = try await client.withTransaction(logger: logger) { connection -> LogInOutcome? in
            guard let current = try await AccountStore.lockCredentials(accountID: record.accountID, on: connection, logger: logger),
                current.active, let hash = current.passwordHash, hash == record.passwordHash
            else { return nil }
            if try await SecondFactorStore.factor(accountID: record.accountID, on: connection, logger: logger)?.secret != nil {
                let (token, expiresAt) = try await SecondFactorStore.createChallenge(
                    accountID: record.accountID, passwordHash: hash, ttlSeconds: Self.secondFactorChallengeTTL, on: connection, logger: logger)
                return .secondFactorRequired(SecondFactorChallenge(token: token, expiresAt: expiresAt))
            }
            let (token, expiresAt) = try await SessionStore.create(
                accountID: record.accountID, ttlSeconds: sessionTTL, on: connection, logger: logger)
            return .session(NewSession(token: token, accountID: record.accountID, role: record.role, expiresAt: expiresAt))
        }
        guard let created else { throw AccountError.wrongCredentials }
        return created
    }

    /// The caller behind a bearer token (session or API key), or nil.
    package func principal(bearer text: String, logger: Logger) async throws -> Principal? {
        let token = SecretToken(text: text)
        switch token.kind {
        case .session: return try await client.withConnection { try await SessionStore.principal(for: token, on: $0, logger: logger) }
        case .apiKey:
            let now = clock.now
            return try await client.withConnection { try await APIKeyStore.principal(for: token, now: now, on: $0, logger: logger) }
        // Tokens for one step (activation, password reset, a sign-in's second factor) name no caller.
        case .activation, .passwordReset, .secondFactorChallenge, nil: return nil
        }
    }

    package func logOut(_ principal: Principal, logger: Logger) async throws {
        switch principal.credential {
        case .session(let hash):
            try await client.withTransaction(logger: logger) { try await SessionStore.revoke(tokenHash: hash, on: $0, logger: logger) }
        case .apiKey(let id, _):
            // An API key "logs out" by being revoked: the token stops working at once, as the contract says.
            _ = try await client.withTransaction(logger: logger) {
                try await APIKeyStore.revoke(id: id, accountID: principal.accountID, on: $0, logger: logger)
            }
        }
    }

}
