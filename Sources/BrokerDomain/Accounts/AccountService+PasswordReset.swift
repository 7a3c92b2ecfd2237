import Foundation
import Logging
import PostgresNIO

/// Password reset (issue 30): a token mailed to the owner of an activated account sets a new password once,
/// within an hour, and ends every session and API key of the account.
extension AccountService {
    /// How long a reset token works.
    package static let passwordResetValidity = 60 * 60

    /// `POST /v1/password-resets`: mails the owner of the activated account with `email` a reset token (the
    /// earlier ones stop working). Says nothing either way, and does the same work either way: the throttle's
    /// reservation, then one transaction of the same two statements (`PasswordResetStore.issue`), no Argon2 on
    /// any path, and for an activated account one more insert, of its mail into the outbox: no path waits
    /// for a mail program.
    /// Goes through the login throttle, keyed on the email whether or not it names an account: each request
    /// counts as an attempt, and a completed reset forgives the account's.
    package func requestPasswordReset(email rawEmail: String, clientAddress: String, logger: Logger) async throws {
        var errors: [FieldError] = []
        guard let email = validEmail(rawEmail, into: &errors) else { throw AccountError.invalid(errors) }
        // A bucket of its own per address: counted with the logins', six requests by anyone would lock the
        // owner out of signing in, and out of the reset their own link was for.
        _ = try await throttle.reserve(email: Self.resetBucket(email), clientAddress: clientAddress, logger: logger)
        let token = SecretToken.generate(.passwordReset)
        let now = clock.now
        do {
            try await client.withTransaction(logger: logger) { connection in
                guard
                    let owner = try await PasswordResetStore.issue(
                        token, email: email, now: now, validFor: Self.passwordResetValidity, on: connection, logger: logger)
                else { return try await PasswordResetStore.balanceUnknown(on: connection, logger: logger) }
                try await outbox.enqueue(
                    PasswordResetMail.make(to: email, token: token, language: owner.language, publicURL: publicURL), kind: .passwordReset,
                    accountID: owner.accountID, on: connection, logger: logger)
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
    }

    /// The throttle bucket of reset requests for `email`: apart from the logins' (`email` itself).
    static func resetBucket(_ email: String) -> String { "password-reset:" + email }

    /// `POST /v1/password-resets/{token}`: sets `password` (the registration's policy) on the token's account,
    /// uses the token up, ends every session and API key of the account, and mails the owner. An unknown,
    /// used or replaced token is `passwordResetTokenUnknown`; one older than an hour `passwordResetTokenExpired`.
    /// Through the login throttle too: a token that names no live reset is counted (on the bucket of no
    /// account, and the client's address) before it is answered; a live token is never held back by it.
    package func resetPassword(token text: String, password: String, clientAddress: String, logger: Logger) async throws {
        let token = SecretToken(text: text.trimmingCharacters(in: .whitespaces))
        // Only a reset token is looked up: a session token or an API key names no reset, whatever its hash.
        let found: PasswordResetStore.TokenRecord? =
            token.kind == .passwordReset
            ? try await client.withConnection {
                try await PasswordResetStore.token(hash: token.hash, now: clock.now, on: $0, logger: logger)
            } : nil
        // A token that names no live reset is a guess: counted (on the bucket of no account, and the client's
        // address) before it is answered. A live one is not: it proves the mailbox, and whatever anyone did to
        // the account's own bucket (wrong passwords, reset requests) must not keep its owner from using it.
        guard let found, !found.used, !found.expired else {
            _ = try await throttle.reserve(email: "", clientAddress: clientAddress, logger: logger)
            throw found?.expired == true && found?.used == false ? AccountError.passwordResetTokenExpired : AccountError.passwordResetTokenUnknown
        }
        var errors: [FieldError] = []
        validatePassword(password, email: found.email, field: "password", into: &errors)
        guard errors.isEmpty else { throw AccountError.invalid(errors) }
        let hash = try await hasher.hash(password)
        let pseudonym = try await pseudonymizer.pseudonym(for: found.accountID, logger: logger)
        do {
            try await client.withTransaction(logger: logger) { connection in
                // Judged again under the row's lock: of two resets with one token, the second finds it used.
                let now = clock.now
                guard let record = try await PasswordResetStore.token(hash: token.hash, now: now, lock: true, on: connection, logger: logger),
                    !record.used
                else { throw AccountError.passwordResetTokenUnknown }
                guard !record.expired else { throw AccountError.passwordResetTokenExpired }
                // The password hash is on the account's row: a login that checked the old password and is
                // making its session now waits for this, then finds the hash changed (`logIn`).
                try await AccountStore.updatePasswordHash(accountID: record.accountID, hash: hash, on: connection, logger: logger)
                try await PasswordResetStore.useAll(accountID: record.accountID, now: now, on: connection, logger: logger)
                try await SessionStore.revokeAll(accountID: record.accountID, keeping: nil, on: connection, logger: logger)
                let role = try await AccountStore.account(id: record.accountID, on: connection, logger: logger)?.role ?? .user
                let actor = role == .user ? pseudonym : record.accountID.uuidString.lowercased()
                try await AuditLog.append(
                    AuditEvent(actorID: actor, actorRole: role.rawValue, action: AuditAction.passwordReset, subject: pseudonym),
                    on: connection, logger: logger)
                // Whoever knew the old password may have made a key; unlike a change, a reset keeps none.
                _ = try await revokeAllAPIKeys(
                    of: record.accountID, reason: .passwordReset, actor: (actor, role.rawValue), on: connection, logger: logger)
                // The owner hears of it at once, from the same transaction: a reset nobody is told of is not made.
                let language = try await outbox.language(of: record.accountID, on: connection, logger: logger)
                try await outbox.enqueue(
                    PasswordChangedMail.make(to: record.email, language: language, publicURL: publicURL), kind: .passwordChanged,
                    accountID: record.accountID, on: connection, logger: logger)
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
        logger.info("password reset", metadata: ["account.id": "\(found.accountID)"])
    }

    /// Forgets reset tokens a day past their expiry (the background housekeeping).
    @discardableResult
    package func forgetExpiredPasswordResets(logger: Logger) async throws -> Int {
        let cutoff = clock.now.addingTimeInterval(-24 * 60 * 60)
        return try await client.withConnection { try await PasswordResetStore.forgetExpired(before: cutoff, on: $0, logger: logger) }
    }
}
