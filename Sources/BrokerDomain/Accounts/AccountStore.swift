import Foundation
import Logging
import PostgresNIO

/// The SQL of accounts and their profiles.
package enum AccountStore {
    /// What logging in needs to know about an email.
    package struct LoginRecord: Sendable {
        package var accountID: UUID
        package var role: Role
        package var status: AccountStatus
        package var passwordHash: String?
    }

    /// `replacing` is the pending registration of the same email this one replaces (already deleted): the new
    /// account is marked as a replacement and keeps the time of that one's last unsolicited mail, so that
    /// registering again and again cannot get round the mail cooldown.
    static func insertAccount(
        role: Role, email: String, passwordHash: String?, language: Language, replacing: ReplacedRegistration? = nil,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> UUID {
        let rows = try await connection.query(
            """
            INSERT INTO accounts (role, email, password_hash, language, registration_replaced, account_mail_sent_at)
            VALUES (\(role.rawValue), \(email), \(passwordHash), \(language.rawValue), \(replacing != nil), \(replacing?.mailSentAt))
            RETURNING id
            """, logger: logger)
        guard let id = try await rows.collect().first?.decode(UUID.self) else { throw AccountStoreError.noRow }
        return id
    }

    static func insertUserProfile(
        accountID: UUID, fiscalCode: String, fullName: String, birthDate: String, sex: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO users (account_id, fiscal_code, full_name, birth_date, sex)
            VALUES (\(accountID), \(fiscalCode), \(fullName), \(birthDate)::date, \(sex))
            """, logger: logger)
    }

    static func insertThirdPartyProfile(
        accountID: UUID, vatNumber: String, companyName: String, description: String?,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO third_parties (account_id, vat_number, company_name, description)
            VALUES (\(accountID), \(vatNumber), \(companyName), \(description))
            """, logger: logger)
    }

    static func insertActivationToken(
        _ token: SecretToken, accountID: UUID, validFor seconds: Int, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO activation_tokens (token_hash, account_id, expires_at)
            VALUES (\(token.hash), \(accountID), now() + make_interval(secs => \(seconds)))
            """, logger: logger)
    }

    package static func account(id: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Account? {
        let rows = try await connection.query(
            """
            SELECT a.id, a.role, a.email, a.status, a.created_at, a.activated_at, a.language,
                   u.full_name, u.fiscal_code, to_char(u.birth_date, 'YYYY-MM-DD'), u.sex::text, u.time_zone,
                   t.company_name, t.vat_number, t.description
            FROM accounts a
            LEFT JOIN users u ON u.account_id = a.id
            LEFT JOIN third_parties t ON t.account_id = a.id
            WHERE a.id = \(id)
            """, logger: logger)
        for try await row in rows.decode(
            (UUID, String, String, String, Date, Date?, String, String?, String?, String?, String?, String?, String?, String?, String?).self)
        {
            let role = Role(rawValue: row.1) ?? .user
            let profile: Account.Profile
            switch role {
            case .user:
                profile = .user(
                    fullName: row.7 ?? "", fiscalCode: row.8 ?? "", birthDate: row.9 ?? "", sex: row.10 ?? "", timeZone: row.11)
            case .thirdParty:
                profile = .thirdParty(companyName: row.12 ?? "", vatNumber: row.13 ?? "", description: row.14)
            case .auditor:
                profile = .auditor
            }
            return Account(
                id: row.0, role: role, email: row.2, status: AccountStatus(rawValue: row.3) ?? .pending,
                createdAt: row.4, activatedAt: row.5, profile: profile, language: Language(rawValue: row.6) ?? .fallback)
        }
        return nil
    }

    package static func loginRecord(email: String, on connection: PostgresConnection, logger: Logger) async throws -> LoginRecord? {
        let rows = try await connection.query(
            "SELECT id, role, status, password_hash FROM accounts WHERE email = \(email)", logger: logger)
        for try await (id, role, status, hash) in rows.decode((UUID, String, String, String?).self) {
            return LoginRecord(
                accountID: id, role: Role(rawValue: role) ?? .user, status: AccountStatus(rawValue: status) ?? .pending,
                passwordHash: hash)
        }
        return nil
    }

    package static func passwordHash(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.query("SELECT password_hash FROM accounts WHERE id = \(accountID)", logger: logger)
        return try await rows.collect().first?.decode(String?.self)
    }

    /// The state of an activation token, locked for the rest of the transaction so it can be used only once.
    struct ActivationRecord {
        var accountID: UUID
        var expired: Bool
        var used: Bool
        /// An account created without a password (an auditor): the password is chosen at activation.
        var needsPassword: Bool
        /// A registration that replaced an earlier pending one of its email: activating it asks for the
        /// password it was registered with.
        var confirmsPassword: Bool
    }

    static func lockActivation(tokenHash: Data, on connection: PostgresConnection, logger: Logger) async throws
        -> ActivationRecord?
    {
        let rows = try await connection.query(
            """
            SELECT t.account_id, t.expires_at <= now(), t.used_at IS NOT NULL, a.password_hash IS NULL, a.registration_replaced
            FROM activation_tokens t JOIN accounts a ON a.id = t.account_id
            WHERE t.token_hash = \(tokenHash)
            FOR UPDATE OF t
            """, logger: logger)
        for try await (id, expired, used, needsPassword, replaced) in rows.decode((UUID, Bool, Bool, Bool, Bool).self) {
            return ActivationRecord(
                accountID: id, expired: expired, used: used, needsPassword: needsPassword, confirmsPassword: replaced && !needsPassword)
        }
        return nil
    }

    static func activate(
        accountID: UUID, tokenHash: Data, newPasswordHash: String?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            "UPDATE activation_tokens SET used_at = now() WHERE token_hash = \(tokenHash)", logger: logger)
        try await connection.query(
            """
            UPDATE accounts
            SET status = 'active', activated_at = coalesce(activated_at, now()),
                password_hash = coalesce(\(newPasswordHash), password_hash)
            WHERE id = \(accountID)
            """, logger: logger)
    }

    static func updateUserProfile(accountID: UUID, fullName: String, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            "UPDATE users SET full_name = \(fullName) WHERE account_id = \(accountID)", logger: logger)
    }

    static func updateThirdPartyProfile(
        accountID: UUID, companyName: String?, description: String?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE third_parties
            SET company_name = coalesce(\(companyName), company_name), description = coalesce(\(description), description)
            WHERE account_id = \(accountID)
            """, logger: logger)
    }

    static func updateLanguage(accountID: UUID, language: Language, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE accounts SET language = \(language.rawValue) WHERE id = \(accountID)", logger: logger)
    }

    /// The language an account's mails and pages are written in; nil when there is no such account.
    package static func language(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Language? {
        let rows = try await connection.query("SELECT language FROM accounts WHERE id = \(accountID)", logger: logger)
        return try await rows.collect().first.map { Language(rawValue: try $0.decode(String.self)) ?? .fallback }
    }

    static func updatePasswordHash(accountID: UUID, hash: String, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            "UPDATE accounts SET password_hash = \(hash) WHERE id = \(accountID)", logger: logger)
    }

    /// Locks the account's row until the transaction ends and returns its password hash and whether it is
    /// active. A password change updates the same row, so whatever a credential makes in a transaction that
    /// took this lock (a session, an API key) is made either before the change, whose revocations then see
    /// it, or after it, against the new password and the sessions it left.
    static func lockCredentials(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> (passwordHash: String?, active: Bool)?
    {
        let rows = try await connection.query(
            "SELECT password_hash, status = 'active' FROM accounts WHERE id = \(accountID) FOR UPDATE", logger: logger)
        for try await (hash, active) in rows.decode((String?, Bool).self) { return (hash, active) }
        return nil
    }

    // MARK: Unactivated accounts

    /// The condition of an account that was never activated within `lifetime` seconds. Auditors are added by
    /// the operator, hold no one's identity, and are not expired. Written into the text: `lifetime` is a
    /// whole number from the configuration.
    private static func unactivated(_ alias: String, lifetime: Int) -> String {
        "(\(alias).status = 'pending' AND \(alias).role <> 'auditor' AND \(alias).created_at < now() - make_interval(secs => \(lifetime)))"
    }

    /// Deletes the expired unactivated accounts that hold `email`, `fiscalCode` or `vatNumber`, so that a
    /// registration in the same transaction can take them; returns their ids (for the audit log).
    static func deleteExpiredHolders(
        email: String, fiscalCode: String?, vatNumber: String?, lifetime: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> [UUID] {
        let rows = try await connection.query(
            """
            DELETE FROM accounts a
            WHERE \(unescaped: unactivated("a", lifetime: lifetime))
              AND (a.email = \(email)
                   OR a.id IN (SELECT account_id FROM users WHERE fiscal_code = \(fiscalCode))
                   OR a.id IN (SELECT account_id FROM third_parties WHERE vat_number = \(vatNumber)))
            RETURNING a.id
            """, logger: logger)
        return try await rows.collect().map { try $0.decode(UUID.self) }
    }

    /// A pending registration deleted because a newer registration of its email took its place.
    struct ReplacedRegistration {
        var id: UUID
        /// When it was last sent a mail it did not ask for itself (`account_mail_sent_at`).
        var mailSentAt: Date?
    }

    /// Serialises the registrations of one email (lower-cased) until the caller's transaction ends. Without
    /// it two first registrations of an address race: the one that commits first is not marked as replaced,
    /// and the other hits the unique email and silently answers 202 without a mail. The wait is bounded by
    /// the pool's `lock_timeout` (`DATABASE_LOCK_TIMEOUT`, a 503). Two-key advisory locks have a key space
    /// of their own; the class is named like the project's other locks (`data4help.…`).
    static func lockRegistrations(of email: String, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('data4help.registration_email'), hashtext(lower(\(email))))", logger: logger
        ).collect()
    }

    /// Deletes the pending registration (never an operator's auditor) of `email`, so that the registration in
    /// the same transaction takes its place: its password, identity and activation links go with it (ON
    /// DELETE CASCADE). Only the same email replaces a pending registration: its fiscal code or VAT number it
    /// holds against registrations of other emails until it expires (`holder`).
    static func deletePendingRegistration(email: String, on connection: PostgresConnection, logger: Logger) async throws
        -> ReplacedRegistration?
    {
        let rows = try await connection.query(
            """
            DELETE FROM accounts a
            WHERE a.email = \(email) AND a.status = 'pending' AND a.role <> 'auditor'
            RETURNING a.id, a.account_mail_sent_at
            """, logger: logger)
        for try await (id, mailSentAt) in rows.decode((UUID, Date?).self) {
            return ReplacedRegistration(id: id, mailSentAt: mailSentAt)
        }
        return nil
    }

    /// Deletes up to `limit` expired unactivated accounts (the background sweep); returns their ids.
    static func deleteExpiredUnactivated(lifetime: Int, limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [UUID] {
        let rows = try await connection.query(
            """
            DELETE FROM accounts WHERE id IN (
                SELECT a.id FROM accounts a WHERE \(unescaped: unactivated("a", lifetime: lifetime))
                ORDER BY a.created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING id
            """, logger: logger)
        return try await rows.collect().map { try $0.decode(UUID.self) }
    }

    /// Whether the account was never activated and its time to be has passed (its activation links stop).
    static func isExpiredUnactivated(accountID: UUID, lifetime: Int, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT \(unescaped: unactivated("a", lifetime: lifetime)) FROM accounts a WHERE a.id = \(accountID)", logger: logger)
        return try await rows.collect().first?.decode(Bool.self) ?? false
    }

    /// The unactivated, unexpired account with `email`, if its last activation mail is older than `cooldown`
    /// seconds; claims the next mail (stamps the time) in the same statement, so two requests at once send one.
    static func claimActivationMail(
        email: String, lifetime: Int, cooldown: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> (id: UUID, role: Role, replaced: Bool)? {
        let rows = try await connection.query(
            """
            UPDATE accounts a SET account_mail_sent_at = now()
            WHERE a.email = \(email) AND a.status = 'pending' AND NOT \(unescaped: unactivated("a", lifetime: lifetime))
              AND (a.account_mail_sent_at IS NULL OR a.account_mail_sent_at < now() - make_interval(secs => \(cooldown)))
            RETURNING a.id, a.role, a.registration_replaced AND a.password_hash IS NOT NULL
            """, logger: logger)
        for try await (id, role, replaced) in rows.decode((UUID, String, Bool).self) {
            return (id, Role(rawValue: role) ?? .user, replaced)
        }
        return nil
    }

    /// The account that already holds what a registration asks for: its email, else its fiscal code or VAT
    /// number. Any account holds its fiscal code and VAT number, pending or not. Its email is held by an
    /// activated account or an auditor the operator added (who has no password until activation, so nothing
    /// to pre-hijack); a pending registration of the same email is replaced instead (`deletePendingRegistration`).
    struct Holder {
        var id: UUID
        var email: String
        var role: Role
        var pending: Bool
        /// Whether it holds the email (else the fiscal code or VAT number).
        var byEmail: Bool
    }

    static func holder(
        email: String, fiscalCode: String?, vatNumber: String?, on connection: PostgresConnection, logger: Logger
    ) async throws -> Holder? {
        let rows = try await connection.query(
            """
            SELECT a.id, a.email, a.role, a.status = 'pending', a.email = \(email)
            FROM accounts a
            WHERE NOT (a.email = \(email) AND a.status = 'pending' AND a.role <> 'auditor')
              AND (a.email = \(email)
                   OR a.id IN (SELECT account_id FROM users WHERE fiscal_code = \(fiscalCode))
                   OR a.id IN (SELECT account_id FROM third_parties WHERE vat_number = \(vatNumber)))
            ORDER BY a.email = \(email) DESC
            LIMIT 1
            """, logger: logger)
        for try await (id, holderEmail, role, pending, byEmail) in rows.decode((UUID, String, String, Bool, Bool).self) {
            return Holder(id: id, email: holderEmail, role: Role(rawValue: role) ?? .user, pending: pending, byEmail: byEmail)
        }
        return nil
    }

    /// Claims the account's next unsolicited mail if the last one is older than `cooldown` seconds.
    static func claimNoticeMail(accountID: UUID, cooldown: Int, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            UPDATE accounts SET account_mail_sent_at = now()
            WHERE id = \(accountID)
              AND (account_mail_sent_at IS NULL OR account_mail_sent_at < now() - make_interval(secs => \(cooldown)))
            RETURNING id
            """, logger: logger)
        return try await rows.collect().first != nil
    }

    /// A new activation mail makes the earlier links of the account useless: only the newest works.
    static func retireActivationTokens(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "DELETE FROM activation_tokens WHERE account_id = \(accountID) AND used_at IS NULL", logger: logger)
    }

    /// Deletes the account; profile, tokens, sessions and keys go with it (ON DELETE CASCADE).
    static func delete(accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM accounts WHERE id = \(accountID)", logger: logger)
    }
}
