import Foundation
import Logging
import PostgresNIO

/// The second factor (TOTP, RFC 6238): enrolling, confirming, turning it off, and the second step of a
/// sign-in. Every check of a confirmed factor's code goes through the login throttle (its own account
/// bucket, the address's shared one), reserved before the code is checked.
extension AccountService {
    /// Seconds between a right password and its code: long enough to open an app, short enough that a
    /// challenge left lying around is soon worthless.
    package static let secondFactorChallengeTTL = 5 * 60
    /// The name authenticator apps show next to the account.
    package static let secondFactorIssuer = "Data4Help"

    package func secondFactorStatus(of principal: Principal, logger: Logger) async throws -> SecondFactorStatus {
        try await client.withConnection { connection in
            let row = try await SecondFactorStore.factor(accountID: principal.accountID, on: connection, logger: logger)
            let unused = try await SecondFactorStore.unusedRecoveryCodes(accountID: principal.accountID, on: connection, logger: logger)
            return SecondFactorStatus(
                enabled: row?.secret != nil, enabledAt: row?.confirmedAt, pendingEnrolment: row?.pendingSecret != nil,
                unusedRecoveryCodes: row?.secret != nil ? unused : 0, required: principal.role == .auditor)
        }
    }

    /// A new key for the caller, pending until `confirmSecondFactor`; a new start replaces an unconfirmed
    /// one. A confirmed factor stays in force meanwhile: sign-in does not change until the new key is confirmed.
    package func startSecondFactorEnrolment(_ principal: Principal, logger: Logger) async throws -> SecondFactorEnrolment {
        let account = try await account(of: principal, logger: logger)
        let totp = TOTP.generate()
        try await client.withTransaction(logger: logger) {
            try await SecondFactorStore.startEnrolment(accountID: account.id, pendingSecret: totp.secret, on: $0, logger: logger)
        }
        let uri = totp.uri(issuer: Self.secondFactorIssuer, account: account.email)
        return SecondFactorEnrolment(secret: totp.base32Secret, uri: uri, qrCodeSVG: try QRCode.svg(uri))
    }

    /// The enrolment started and not yet confirmed, shown again (the console's confirmation page); nil if none.
    package func pendingSecondFactorEnrolment(of principal: Principal, logger: Logger) async throws -> SecondFactorEnrolment? {
        let account = try await account(of: principal, logger: logger)
        guard
            let pending = try await client.withConnection({
                try await SecondFactorStore.factor(accountID: account.id, on: $0, logger: logger)
            })?.pendingSecret
        else { return nil }
        let totp = TOTP(secret: pending)
        let uri = totp.uri(issuer: Self.secondFactorIssuer, account: account.email)
        return SecondFactorEnrolment(secret: totp.base32Secret, uri: uri, qrCodeSVG: try QRCode.svg(uri))
    }

    /// Confirms the pending key with its first `code` and returns the ten recovery codes, shown only now.
    /// Replacing a confirmed factor needs `current` too (a code of the factor in force, or a recovery code):
    /// a session alone, perhaps a stolen one, cannot swap the factor for its own.
    package func confirmSecondFactor(
        _ principal: Principal, code: String, current: SecondFactorCode?, clientAddress: String, logger: Logger
    ) async throws -> [RecoveryCode] {
        guard
            let row = try await client.withConnection({ try await SecondFactorStore.factor(accountID: principal.accountID, on: $0, logger: logger) }),
            let pending = row.pendingSecret
        else { throw SecondFactorError.noPendingEnrolment }
        let replacing = row.secret != nil
        if replacing {
            guard let current else {
                throw SecondFactorError.invalid([FieldError(field: "currentCode", message: "is required to replace a second factor")])
            }
            guard try await checkCurrentFactor(of: principal.accountID, current, clientAddress: clientAddress, logger: logger) else {
                throw SecondFactorError.wrongCode(field: current.isRecovery ? "currentRecoveryCode" : "currentCode")
            }
        }
        // The key was handed to this caller a moment ago: a wrong first code is a typo, not a guess.
        guard let step = TOTP(secret: pending).matchingStep(of: code, at: clock.now) else { throw SecondFactorError.wrongCode(field: "code") }
        let codes = (0..<RecoveryCode.count).map { _ in RecoveryCode.generate() }
        let pseudonym = try await pseudonymizer.pseudonym(for: principal.accountID, logger: logger)
        let confirmed = try await client.withTransaction(logger: logger) { connection -> Bool in
            guard
                try await SecondFactorStore.confirm(
                    accountID: principal.accountID, pendingSecret: pending, step: step, on: connection, logger: logger)
            else { return false }
            try await SecondFactorStore.replaceRecoveryCodes(
                accountID: principal.accountID, hashes: codes.map(\.hash), on: connection, logger: logger)
            // Sessions opened with the password alone (an auditor's held at "must enrol", or one opened by
            // whoever else knew the password) would pass the gate from now on: only the enrolling one stays.
            var keeping: Data?
            if case .session(let hash) = principal.credential { keeping = hash }
            try await SessionStore.revokeAll(accountID: principal.accountID, keeping: keeping, on: connection, logger: logger)
            try await AuditLog.append(
                AuditEvent(
                    actorID: secondFactorActor(principal, pseudonym: pseudonym), actorRole: principal.role.rawValue,
                    action: AuditAction.secondFactorEnabled, subject: pseudonym, details: ["replaced": .bool(replacing)]),
                on: connection, logger: logger)
            return true
        }
        // Another start replaced the pending key meanwhile: this code confirmed a key no longer on offer.
        guard confirmed else { throw SecondFactorError.noPendingEnrolment }
        logger.info("second factor enabled", metadata: ["account.role": "\(principal.role.rawValue)"])
        return codes
    }

    /// Turns the caller's factor off, with a current code or a recovery code.
    package func disableSecondFactor(_ principal: Principal, _ current: SecondFactorCode, clientAddress: String, logger: Logger) async throws {
        guard
            try await client.withConnection({ try await SecondFactorStore.factor(accountID: principal.accountID, on: $0, logger: logger) })?.secret
                != nil
        else { throw SecondFactorError.notEnrolled }
        guard try await checkCurrentFactor(of: principal.accountID, current, clientAddress: clientAddress, logger: logger) else {
            throw SecondFactorError.wrongCode(field: current.isRecovery ? "recoveryCode" : "code")
        }
        let pseudonym = try await pseudonymizer.pseudonym(for: principal.accountID, logger: logger)
        try await client.withTransaction(logger: logger) { connection in
            guard try await SecondFactorStore.delete(accountID: principal.accountID, on: connection, logger: logger) else { return }
            try await AuditLog.append(
                AuditEvent(
                    actorID: secondFactorActor(principal, pseudonym: pseudonym), actorRole: principal.role.rawValue,
                    action: AuditAction.secondFactorDisabled, subject: pseudonym),
                on: connection, logger: logger)
        }
        logger.info("second factor disabled", metadata: ["account.role": "\(principal.role.rawValue)"])
    }

    /// The second step of a sign-in: the challenge the password gave, and a current code or a recovery code.
    /// Any failure — an unknown, expired or used challenge, a wrong, replayed or used code — is one 401.
    package func completeLogIn(challenge text: String, _ proof: SecondFactorCode, clientAddress: String, logger: Logger) async throws
        -> NewSession
    {
        let challenge = SecretToken(text: text)
        guard challenge.kind == .secondFactorChallenge,
            let (accountID, _) = try await client.withConnection({
                try await SecondFactorStore.challenge(tokenHash: challenge.hash, lock: false, on: $0, logger: logger)
            })
        else { throw SecondFactorError.wrongSecondFactor }
        // Counted before the code is checked: thirty concurrent guesses queue on the bucket's row, and only
        // the free ones are evaluated.
        let attempt = try await throttle.reserve(secondFactorOf: accountID, clientAddress: clientAddress, logger: logger)
        let now = clock.now
        let session = try await client.withTransaction(logger: logger) { connection -> NewSession? in
            // The account's row first, as the password's sign-in and a password change lock it: a change
            // committed since the password was checked ends the challenge.
            guard let credentials = try await AccountStore.lockCredentials(accountID: accountID, on: connection, logger: logger),
                credentials.active,
                let live = try await SecondFactorStore.challenge(tokenHash: challenge.hash, lock: true, on: connection, logger: logger),
                live.accountID == accountID, live.passwordHash == credentials.passwordHash,
                try await accept(proof, accountID: accountID, at: now, on: connection, logger: logger),
                let account = try await AccountStore.account(id: accountID, on: connection, logger: logger)
            else { return nil }
            try await SecondFactorStore.useChallenge(tokenHash: challenge.hash, on: connection, logger: logger)
            let (token, expiresAt) = try await SessionStore.create(accountID: accountID, ttlSeconds: sessionTTL, on: connection, logger: logger)
            return NewSession(token: token, accountID: accountID, role: account.role, expiresAt: expiresAt)
        }
        // A wrong code keeps its reserved place: that is the recorded failure.
        guard let session else { throw SecondFactorError.wrongSecondFactor }
        try await throttle.forgive(attempt, logger: logger)
        return session
    }

    /// Forgets sign-in challenges expired for an hour (the background housekeeping calls this).
    @discardableResult
    package func forgetExpiredSecondFactorChallenges(logger: Logger) async throws -> Int {
        try await client.withConnection { try await SecondFactorStore.forgetExpiredChallenges(on: $0, logger: logger) }
    }

    // MARK: Checking a code

    /// Checks a code of the account's confirmed factor through the throttle, and uses it up.
    private func checkCurrentFactor(of accountID: UUID, _ proof: SecondFactorCode, clientAddress: String, logger: Logger) async throws -> Bool {
        let attempt = try await throttle.reserve(secondFactorOf: accountID, clientAddress: clientAddress, logger: logger)
        let now = clock.now
        let accepted = try await client.withTransaction(logger: logger) { connection in
            try await accept(proof, accountID: accountID, at: now, on: connection, logger: logger)
        }
        if accepted { try await throttle.forgive(attempt, logger: logger) }
        return accepted
    }

    /// Accepts a TOTP code of the confirmed key for a step later than any accepted before (so never twice),
    /// or an unused recovery code (which is then used). False for anything else, including a code of a key
    /// that has since been replaced.
    private func accept(_ proof: SecondFactorCode, accountID: UUID, at now: Date, on connection: PostgresConnection, logger: Logger)
        async throws -> Bool
    {
        switch proof {
        case .totp(let code):
            guard let secret = try await SecondFactorStore.factor(accountID: accountID, on: connection, logger: logger)?.secret,
                let step = TOTP(secret: secret).matchingStep(of: code, at: now)
            else { return false }
            return try await SecondFactorStore.acceptStep(accountID: accountID, secret: secret, step: step, on: connection, logger: logger)
        case .recovery(let typed):
            guard let hash = RecoveryCode.hash(ofTyped: typed),
                try await SecondFactorStore.factor(accountID: accountID, on: connection, logger: logger)?.secret != nil
            else { return false }
            return try await SecondFactorStore.useRecoveryCode(accountID: accountID, hash: hash, on: connection, logger: logger)
        }
    }

    /// People appear in the audit log only as pseudonyms; companies and auditors by account id.
    private func secondFactorActor(_ principal: Principal, pseudonym: String) -> String {
        principal.role == .user ? pseudonym : principal.accountID.uuidString.lowercased()
    }
}

extension SecondFactorCode {
    var isRecovery: Bool { if case .recovery = self { true } else { false } }
}
