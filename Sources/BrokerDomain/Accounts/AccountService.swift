import Foundation
import Logging
import PostgresNIO

/// The rules of accounts, sessions and API keys; handlers and the CLI call these, never the stores directly.
package struct AccountService: Sendable {
    package let client: DatabasePool
    package let throttle: LoginThrottle
    package let hasher: PasswordHasher
    /// Where the accounts' mails are written, in the transaction of what causes them.
    package let outbox: MailOutbox
    package let pseudonymizer: Pseudonymizer
    /// Erasure refuses and ends the person's requests through the single-request rules.
    /// Settable so the server can give it the configured pending-request expiry.
    package let singleRequests: SingleRequestService
    package let publicURL: String
    package let sessionTTL: Int
    /// Verified against when an email is unknown, so a wrong email costs the same time as a wrong password.
    let timingDecoyHash: String

    package static let activationValidity = 24 * 60 * 60
    /// `ACTIVATION_EXPIRY_HOURS` (48) in seconds: an account not activated by then no longer exists, and its
    /// email, fiscal code and VAT number are free again (a squatter cannot hold someone's identity).
    package let unactivatedLifetime: Int
    /// Seconds between two activation mails to one account ("send it again", and a repeated registration).
    package static let activationMailCooldown = 5 * 60
    /// The wall clock (`BrokerConfiguration.clock`) for the times stamped here rather than by the database.
    package let clock: WallClock

    /// `singleRequests` is what an erasure releases through; `pseudonymizer` names people in the audit log.
    package init(
        client: DatabasePool, hasher: PasswordHasher, outbox: MailOutbox, publicURL: String, sessionTTL: Int,
        pseudonymizer: Pseudonymizer, singleRequests: SingleRequestService,
        loginThrottle: LoginThrottle.Settings = .init(), unactivatedLifetime: Int = 48 * 60 * 60,
        clock: WallClock = .system
    ) async throws {
        self.unactivatedLifetime = unactivatedLifetime
        self.clock = clock
        self.client = client
        self.throttle = LoginThrottle(client: client, settings: loginThrottle)
        self.hasher = hasher
        self.outbox = outbox
        self.pseudonymizer = pseudonymizer
        self.singleRequests = singleRequests
        self.publicURL = publicURL
        self.sessionTTL = sessionTTL
        self.timingDecoyHash = try await hasher.hash(UUID().uuidString + UUID().uuidString)
    }

    /// For one-off commands (seeds, `d4h auditors add`, benchmarks), which register accounts and nothing
    /// more: it builds its collaborators itself. The server's are built once, in `buildApplication`.
    package static func standalone(client: DatabasePool, publicURL: String, sessionTTL: Int = 3600) async throws
        -> AccountService
    {
        let pseudonymizer = Pseudonymizer(client: client)
        return try await AccountService(
            client: client, hasher: PasswordHasher(), outbox: MailOutbox(client: client, publicURL: publicURL), publicURL: publicURL,
            sessionTTL: sessionTTL,
            pseudonymizer: pseudonymizer, singleRequests: SingleRequestService(client: client, pseudonymizer: pseudonymizer))
    }

    // MARK: Registration and activation

    package struct UserRegistration: Sendable {
        package var email, password, fiscalCode, fullName, birthDate, sex: String
        /// The account's language; nil when the client named none we speak (then `Language.fallback`). The
        /// edges fill it from the body, else from `Accept-Language`.
        package var language: Language?
        package init(
            email: String, password: String, fiscalCode: String, fullName: String, birthDate: String, sex: String, language: Language? = nil
        ) {
            (self.email, self.password, self.fiscalCode, self.fullName, self.birthDate, self.sex) =
                (email, password, fiscalCode, fullName, birthDate, sex)
            self.language = language
        }
    }

    package struct ThirdPartyRegistration: Sendable {
        package var email, password, vatNumber, companyName: String
        package var description: String?
        /// As a person's (`UserRegistration.language`).
        package var language: Language?
        package init(
            email: String, password: String, vatNumber: String, companyName: String, description: String?, language: Language? = nil
        ) {
            (self.email, self.password, self.vatNumber, self.companyName, self.description) =
                (email, password, vatNumber, companyName, description)
            self.language = language
        }
    }

    /// Registers a person. Returns the new pending account, or nil when the email or the fiscal code is
    /// already held: then nothing is created and the holder is mailed instead. Callers over HTTP must answer
    /// both the same way (the registration is not an oracle of who is registered); the work is the same
    /// (the Argon2id hash is computed either way, and one mail goes out either way).
    package func register(_ registration: UserRegistration, logger: Logger) async throws -> Account? {
        var errors: [FieldError] = []
        let email = validEmail(registration.email, into: &errors)
        validatePassword(registration.password, email: registration.email, field: "password", into: &errors)
        let fullName = validText(registration.fullName, field: "fullName", maxLength: 200, into: &errors)
        let birthDate = CalendarDate(iso: registration.birthDate)
        if birthDate == nil { errors.append(FieldError(field: "birthDate", message: "must be a real date as YYYY-MM-DD")) }
        if let date = birthDate, date > clock.today || date.year < 1900 {
            errors.append(FieldError(field: "birthDate", message: "must be between 1900-01-01 and today"))
        }
        let sex = Sex(rawValue: registration.sex)
        if sex == nil { errors.append(FieldError(field: "sex", message: "must be F or M")) }
        var fiscalCode: FiscalCode?
        switch FiscalCode.parse(registration.fiscalCode) {
        case .success(let code):
            fiscalCode = code
            if let date = birthDate, let sex {
                errors += code.mismatches(birthDate: date, sex: sex).map { FieldError(field: "fiscalCode", message: $0.message) }
            }
        case .failure(let error):
            errors.append(FieldError(field: "fiscalCode", message: error.message))
        }
        guard errors.isEmpty, let email, let fullName, let fiscalCode, let birthDate, let sex else {
            throw AccountError.invalid(errors)
        }
        let hash = try await hasher.hash(registration.password)
        return try await createAccount(
            role: .user, email: email, identity: (fiscalCode.value, nil), passwordHash: hash,
            language: registration.language ?? .fallback, ifTaken: .tellTheHolder, logger: logger
        ) { id, connection in
            try await AccountStore.insertUserProfile(
                accountID: id, fiscalCode: fiscalCode.value, fullName: fullName, birthDate: birthDate.description,
                sex: sex.rawValue, on: connection, logger: logger)
        }
    }

    /// Registers a company; nil when the email or the VAT number is already held (see the person's `register`).
    package func register(_ registration: ThirdPartyRegistration, logger: Logger) async throws -> Account? {
        var errors: [FieldError] = []
        let email = validEmail(registration.email, into: &errors)
        validatePassword(registration.password, email: registration.email, field: "password", into: &errors)
        // One line: a company name is written into mail subjects (a line break there would be a header of its own).
        let companyName = validText(registration.companyName, field: "companyName", maxLength: 200, singleLine: true, into: &errors)
        let description = registration.description.flatMap {
            validText($0, field: "description", maxLength: 2000, allowEmpty: true, into: &errors)
        }
        var vatNumber: VATNumber?
        switch VATNumber.parse(registration.vatNumber) {
        case .success(let number): vatNumber = number
        case .failure(let error): errors.append(FieldError(field: "vatNumber", message: error.message))
        }
        guard errors.isEmpty, let email, let companyName, let vatNumber else { throw AccountError.invalid(errors) }
        let hash = try await hasher.hash(registration.password)
        return try await createAccount(
            role: .thirdParty, email: email, identity: (nil, vatNumber.value), passwordHash: hash,
            language: registration.language ?? .fallback, ifTaken: .tellTheHolder, logger: logger
        ) { id, connection in
            try await AccountStore.insertThirdPartyProfile(
                accountID: id, vatNumber: vatNumber.value, companyName: companyName, description: description,
                on: connection, logger: logger)
        }
    }

    /// `d4h auditors add`: an auditor account without a password; they choose it when activating.
    package func addAuditor(email rawEmail: String, logger: Logger) async throws -> Account {
        var errors: [FieldError] = []
        guard let email = validEmail(rawEmail, into: &errors) else { throw AccountError.invalid(errors) }
        // The operator is told plainly (409): the CLI is no oracle for anyone who does not already hold the database.
        guard
            let account = try await createAccount(
                role: .auditor, email: email, identity: (nil, nil), passwordHash: nil, language: .fallback, ifTaken: .refuse, logger: logger,
                insertProfile: { _, _ in })
        else { throw AccountError.emailTaken }
        return account
    }

    /// What a registration does when its email (or fiscal code, or VAT number) is already held: the
    /// operator's CLI is told (409); the public registration tells the holder and creates nothing.
    private enum WhenTaken { case refuse, tellTheHolder }

    /// Inserts the account and its profile, its activation token, the audit event, and sends the mail,
    /// all in one transaction: a failed mail leaves no account behind, so registering again works.

    private func createAccount(
        role: Role, email: String, identity: (fiscalCode: String?, vatNumber: String?), passwordHash: String?, language: Language,
        ifTaken: WhenTaken, logger: Logger, insertProfile: @Sendable (UUID, PostgresConnection) async throws -> Void
    ) async throws -> Account? {
        let token = SecretToken.generate(.activation)
        do {
            // The account is read back inside the transaction: once the mail is sent, a second lease that
            // timed out would answer "503, nothing changed" for an account that exists.
            let account: Account? = try await client.withTransaction(logger: logger) { connection -> Account? in
                // One registration of an address at a time, so that the second of two at once sees the first
                // (and replaces it, marked) instead of failing on the unique email without a mail.
                try await AccountStore.lockRegistrations(of: email, on: connection, logger: logger)
                // An expired unactivated account holds nothing: it gives way to this registration.
                try await expireUnactivated(
                    try await AccountStore.deleteExpiredHolders(
                        email: email, fiscalCode: identity.fiscalCode, vatNumber: identity.vatNumber, lifetime: unactivatedLifetime,
                        on: connection, logger: logger),
                    on: connection, logger: logger)
                var replaced: AccountStore.ReplacedRegistration?
                if ifTaken == .tellTheHolder {
                    if let holder = try await AccountStore.holder(
                        email: email, fiscalCode: identity.fiscalCode, vatNumber: identity.vatNumber, on: connection, logger: logger)
                    {
                        try await tellTheHolder(holder, on: connection, logger: logger)
                        return nil
                    }
                    replaced = try await replacePendingRegistration(of: email, on: connection, logger: logger)
                }
                let id = try await AccountStore.insertAccount(
                    role: role, email: email, passwordHash: passwordHash, language: language, replacing: replaced, on: connection, logger: logger)
                try await insertProfile(id, connection)
                // A registration that replaced another of its email is mailed within that address's mail
                // cooldown, so that registering again and again floods no one's mailbox. Without a mail it
                // has no link yet: the earlier ones activated the replaced registration and are gone with it,
                // and "send the activation mail again" gives one once the cooldown has passed.
                var mailNow = true
                if replaced != nil {
                    mailNow = try await AccountStore.claimNoticeMail(
                        accountID: id, cooldown: Self.activationMailCooldown, on: connection, logger: logger)
                }
                if mailNow {
                    try await AccountStore.insertActivationToken(
                        token, accountID: id, validFor: Self.activationValidity, on: connection, logger: logger)
                }
                let pseudonym = try await pseudonymizer.pseudonym(for: id, on: connection, logger: logger)
                let isAuditor = role == .auditor
                try await AuditLog.append(
                    AuditEvent(
                        actorID: isAuditor ? nil : (role == .user ? pseudonym : id.uuidString.lowercased()),
                        actorRole: isAuditor ? "operator" : role.rawValue,
                        action: isAuditor ? AuditAction.auditorAdded : AuditAction.accountCreated,
                        subject: pseudonym, details: ["role": .string(role.rawValue)]),
                    on: connection, logger: logger)
                guard let account = try await AccountStore.account(id: id, on: connection, logger: logger) else { throw AccountStoreError.noRow }
                if mailNow {
                    let language = try await outbox.language(of: id, on: connection, logger: logger)
                    try await outbox.enqueue(
                        ActivationMail.make(
                            to: email, role: role, token: token, asksForPassword: replaced != nil, language: language, publicURL: publicURL),
                        kind: .activation, accountID: id, on: connection, logger: logger)
                }
                return account
            }
            if let account {
                logger.info("account created", metadata: ["account.id": "\(account.id)", "account.role": "\(role.rawValue)"])
            }
            return account
        } catch {
            // A registration at the same moment took the email or identity first: it was mailed; this one,
            // like any other taken registration, creates nothing.
            if ifTaken == .tellTheHolder, Self.conflict(for: error) != nil { return nil }
            throw Self.conflict(for: error) ?? PostgresErrors.unwrapTransaction(error)
        }
    }

    /// Pre-hijacking (issue 27): a pending registration gives way to a newer registration of its email, and
    /// only of its email. It is deleted, so the newest registration of an address is the only one its links can
    /// activate; the new account takes its place, and its activation asks for the password it was registered
    /// with, since the address's owner is mailed whichever of two registrations came last. Its fiscal code or
    /// VAT number a pending registration keeps against other emails (`AccountStore.holder`): were it given up
    /// too, another email's registration could delete the owner's pending one, and a later registration of
    /// the owner's address would replace nothing, be unmarked, and be activated by the owner's plain link
    /// with the attacker's password.
    private func replacePendingRegistration(of email: String, on connection: PostgresConnection, logger: Logger) async throws
        -> AccountStore.ReplacedRegistration?
    {
        guard let replaced = try await AccountStore.deletePendingRegistration(email: email, on: connection, logger: logger) else { return nil }
        let pseudonym = try await pseudonymizer.pseudonym(for: replaced.id, on: connection, logger: logger)
        try await AuditLog.append(
            AuditEvent(actorID: nil, actorRole: "anonymous", action: AuditAction.accountReplaced, subject: pseudonym),
            on: connection, logger: logger)
        logger.info("pending registration replaced")
        return replaced
    }

    /// Someone registered with what `holder` holds (an activated account or a pending auditor by email; any
    /// account by fiscal code or VAT number): a pending auditor gets the activation mail again; anyone else a
    /// note that someone tried. Both within the account's mail cooldown.
    private func tellTheHolder(_ holder: AccountStore.Holder, on connection: PostgresConnection, logger: Logger) async throws {
        if holder.byEmail, holder.pending {
            try await sendActivationAgain(email: holder.email, on: connection, logger: logger)
            return
        }
        guard try await AccountStore.claimNoticeMail(accountID: holder.id, cooldown: Self.activationMailCooldown, on: connection, logger: logger)
        else { return }
        let held: RegistrationAttemptMail.Held = holder.byEmail ? .email : (holder.role == .thirdParty ? .vatNumber : .fiscalCode)
        let language = try await outbox.language(of: holder.id, on: connection, logger: logger)
        try await outbox.enqueue(
            RegistrationAttemptMail.make(to: holder.email, held: held, language: language, publicURL: publicURL),
            kind: .registrationAttempt, accountID: holder.id, on: connection, logger: logger)
    }

    package func activate(token text: String, password: String?, logger: Logger) async throws -> Account {
        let token = SecretToken(text: text.trimmingCharacters(in: .whitespaces))
        do {
            let account = try await client.withTransaction(logger: logger) { connection in
                guard let record = try await AccountStore.lockActivation(tokenHash: token.hash, on: connection, logger: logger),
                    !record.used
                else { throw AccountError.activationTokenUnknown }
                if try await AccountStore.isExpiredUnactivated(
                    accountID: record.accountID, lifetime: unactivatedLifetime, on: connection, logger: logger)
                {
                    throw AccountError.registrationExpired(hours: unactivatedLifetime / 3600)
                }
                guard !record.expired else { throw AccountError.activationTokenExpired }
                var newHash: String?
                if record.needsPassword {
                    guard let password else {
                        throw AccountError.invalid([FieldError(field: "password", message: "is required to activate this account")])
                    }
                    let email = try await AccountStore.account(id: record.accountID, on: connection, logger: logger)?.email ?? ""
                    var errors: [FieldError] = []
                    validatePassword(password, email: email, field: "password", into: &errors)
                    guard errors.isEmpty else { throw AccountError.invalid(errors) }
                    newHash = try await hasher.hash(password)
                } else if record.confirmsPassword {
                    // This registration replaced an earlier one of the same address, and the mail went to the
                    // address's owner whoever registered last: the link alone must not activate a squatter's
                    // registration, so whoever follows it proves they made it. The token is known only to the
                    // mailbox's owner, so this is no password oracle for anyone else.
                    guard let password else {
                        throw AccountError.invalid([
                            FieldError(field: "password", message: "is required: enter the password you registered with")
                        ])
                    }
                    let stored =
                        try await AccountStore.passwordHash(accountID: record.accountID, on: connection, logger: logger) ?? timingDecoyHash
                    let plausible = password.count <= PasswordPolicy.maximumLength
                    guard try await hasher.verify(plausible ? password : "", against: stored), plausible else {
                        throw AccountError.invalid([
                            FieldError(
                                field: "password",
                                message: "is not the one this registration was made with; if you did not register again, register again yourself")
                        ])
                    }
                }
                try await AccountStore.activate(
                    accountID: record.accountID, tokenHash: token.hash, newPasswordHash: newHash, on: connection, logger: logger)
                // Requests sent to this email or fiscal code before anyone active had it reach the person now.
                try await SingleRequestStore.deliverWaiting(to: record.accountID, on: connection, logger: logger)
                let pseudonym = try await pseudonymizer.pseudonym(for: record.accountID, on: connection, logger: logger)
                try await AuditLog.append(
                    AuditEvent(actorID: nil, actorRole: "anonymous", action: AuditAction.accountActivated, subject: pseudonym),
                    on: connection, logger: logger)
                guard let account = try await AccountStore.account(id: record.accountID, on: connection, logger: logger)
                else { throw AccountStoreError.noRow }
                return account
            }
            return account
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
    }

    /// Records the deletion of expired unactivated accounts (already deleted by the caller's statement).
    private func expireUnactivated(_ ids: [UUID], on connection: PostgresConnection, logger: Logger) async throws {
        for id in ids {
            let pseudonym = try await pseudonymizer.pseudonym(for: id, on: connection, logger: logger)
            try await AuditLog.append(
                AuditEvent(actorID: nil, actorRole: "system", action: AuditAction.accountExpired, subject: pseudonym),
                on: connection, logger: logger)
        }
        if !ids.isEmpty { logger.info("unactivated accounts expired", metadata: ["count": "\(ids.count)"]) }
    }

    /// The background sweep: deletes up to `limit` expired unactivated accounts; true when there may be more.
    package func sweepUnactivated(limit: Int = 500, logger: Logger) async throws -> Bool {
        let count = try await client.withTransaction(logger: logger) { connection -> Int in
            let ids = try await AccountStore.deleteExpiredUnactivated(lifetime: unactivatedLifetime, limit: limit, on: connection, logger: logger)
            try await expireUnactivated(ids, on: connection, logger: logger)
            return ids.count
        }
        return count == limit
    }

    /// `POST /v1/accounts/activation-mail`: sends a new activation mail (the earlier links stop working) if
    /// `email` names an account that is neither activated nor expired and had no mail in the last few
    /// minutes. Says nothing either way: the caller learns nothing about which emails have accounts.
    package func resendActivation(email rawEmail: String, logger: Logger) async throws {
        var errors: [FieldError] = []
        guard let email = validEmail(rawEmail, into: &errors) else { throw AccountError.invalid(errors) }
        do {
            _ = try await client.withTransaction(logger: logger) { connection in
                try await sendActivationAgain(email: email, on: connection, logger: logger)
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
    }

    /// A new token and mail for the pending account with `email`, within the mail cooldown; false when none
    /// went out (no such pending account, or one was mailed a moment ago).
    @discardableResult
    func sendActivationAgain(email: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        guard
            let claimed = try await AccountStore.claimActivationMail(
                email: email, lifetime: unactivatedLifetime, cooldown: Self.activationMailCooldown, on: connection, logger: logger)
        else { return false }
        let token = SecretToken.generate(.activation)
        try await AccountStore.retireActivationTokens(accountID: claimed.id, on: connection, logger: logger)
        try await AccountStore.insertActivationToken(
            token, accountID: claimed.id, validFor: Self.activationValidity, on: connection, logger: logger)
        let language = try await outbox.language(of: claimed.id, on: connection, logger: logger)
        try await outbox.enqueue(
            ActivationMail.make(
                to: email, role: claimed.role, token: token, asksForPassword: claimed.replaced, language: language, publicURL: publicURL),
            kind: .activation, accountID: claimed.id, on: connection, logger: logger)
        return true
    }

    // MARK: Profile

    package struct ProfileUpdate: Sendable {
        package var fullName, companyName, description, currentPassword, newPassword: String?
        /// A person's IANA time zone; changing it moves the days of all their data.
        package var timeZone: String?
        /// The language of the account's pages and mails (any role).
        package var language: Language?
        /// With `newPassword`: true keeps the account's API keys working; by default (nil, false) the change
        /// revokes them, since whoever knew the old password may have made one.
        package var keepAPIKeys: Bool?
        /// Immutable fields the client tried to set (each answers a field error).
        package var immutableFieldsPresent: [String]
        package init(
            fullName: String? = nil, timeZone: String? = nil, companyName: String? = nil, description: String? = nil,
            currentPassword: String? = nil, newPassword: String? = nil, keepAPIKeys: Bool? = nil, immutableFieldsPresent: [String] = [],
            language: Language? = nil
        ) {
            self.language = language
            (self.fullName, self.companyName, self.description, self.currentPassword, self.newPassword) =
                (fullName, companyName, description, currentPassword, newPassword)
            self.timeZone = timeZone
            self.keepAPIKeys = keepAPIKeys
            self.immutableFieldsPresent = immutableFieldsPresent
        }
    }

    /// The account after an update, and how many API keys its password change revoked (nil: no change).
    package struct UpdatedAccount: Sendable {
        package var account: Account
        package var revokedAPIKeys: Int?
    }

    package func account(of principal: Principal, logger: Logger) async throws -> Account {
        guard let account = try await client.withConnection({ try await AccountStore.account(id: principal.accountID, on: $0, logger: logger) })
        else {
            throw AccountError.unauthenticated
        }
        return account
    }

    /// The language the caller's pages and mails are written in: one column, for the console's every page.
    package func language(of principal: Principal, logger: Logger) async throws -> Language {
        try await client.withConnection { try await AccountStore.language(accountID: principal.accountID, on: $0, logger: logger) }
            ?? .fallback
    }

    package func update(_ principal: Principal, with update: ProfileUpdate, clientAddress: String, logger: Logger) async throws
        -> UpdatedAccount
    {
        let current = try await account(of: principal, logger: logger)
        var errors = update.immutableFieldsPresent.map { FieldError(field: $0, message: "cannot be changed") }
        let notForRole = "is not a field of a \(current.role.rawValue.replacingOccurrences(of: "_", with: " ")) account"
        var fullName: String?
        var companyName: String?
        var description: String?
        if let value = update.fullName {
            if current.role == .user {
                fullName = validText(value, field: "fullName", maxLength: 200, into: &errors)
            } else {
                errors.append(FieldError(field: "fullName", message: notForRole))
            }
        }
        if let value = update.timeZone {
            if current.role != .user {
                errors.append(FieldError(field: "timeZone", message: notForRole))
            } else if !TimeZoneName.isValid(value) {
                errors.append(FieldError(field: "timeZone", message: TimeZoneName.message))
            }
        }
        for (field, value) in [("companyName", update.companyName), ("description", update.description)] {
            guard let value else { continue }
            guard current.role == .thirdParty else {
                errors.append(FieldError(field: field, message: notForRole))
                continue
            }
            let valid = validText(
                value, field: field, maxLength: field == "description" ? 2000 : 200,
                allowEmpty: field == "description", singleLine: field == "companyName", into: &errors)
            if field == "companyName" { companyName = valid } else { description = valid }
        }
        if update.keepAPIKeys != nil, update.newPassword == nil {
            errors.append(FieldError(field: "keepApiKeys", message: "goes with newPassword: it says whether a password change keeps the API keys"))
        }
        var newHash: String?
        switch (update.newPassword, update.currentPassword) {
        case (nil, nil): break
        case (nil, .some): errors.append(FieldError(field: "newPassword", message: "is required with currentPassword"))
        case (.some, nil): errors.append(FieldError(field: "currentPassword", message: "is required to change the password"))
        case (.some(let newPassword), .some(let currentPassword)):
            validatePassword(newPassword, email: current.email, field: "newPassword", into: &errors)
            if try await !checkPassword(currentPassword, of: current, clientAddress: clientAddress, logger: logger) {
                errors.append(FieldError(field: "currentPassword", message: "is wrong"))
            } else if errors.isEmpty {
                newHash = try await hasher.hash(newPassword)
            }
        }
        guard errors.isEmpty else { throw AccountError.invalid(errors) }
        let keepSession: Data? = if case .session(let hash) = principal.credential { hash } else { nil }
        let pseudonym = try await pseudonymizer.pseudonym(for: current.id, logger: logger)
        var revokedAPIKeys: Int?
        do {
            revokedAPIKeys = try await client.withTransaction(logger: logger) { connection -> Int? in
                if let fullName {
                    try await AccountStore.updateUserProfile(accountID: current.id, fullName: fullName, on: connection, logger: logger)
                }
                if let language = update.language {
                    try await AccountStore.updateLanguage(accountID: current.id, language: language, on: connection, logger: logger)
                }
                if let timeZone = update.timeZone {
                    _ = try await TimeZoneStore.setTimeZone(timeZone, for: current.id, onlyIfUnknown: false, on: connection, logger: logger)
                }
                if companyName != nil || description != nil {
                    try await AccountStore.updateThirdPartyProfile(
                        accountID: current.id, companyName: companyName, description: description, on: connection, logger: logger)
                }
                if let newHash {
                    try await AccountStore.updatePasswordHash(accountID: current.id, hash: newHash, on: connection, logger: logger)
                    try await SessionStore.revokeAll(accountID: current.id, keeping: keepSession, on: connection, logger: logger)
                    try await AuditLog.append(
                        AuditEvent(
                            actorID: actorID(current, pseudonym: pseudonym), actorRole: current.role.rawValue,
                            action: AuditAction.passwordChanged, subject: pseudonym, details: ["keepApiKeys": .bool(update.keepAPIKeys == true)]),
                        on: connection, logger: logger)
                    // ASVS V3.3: the owner can end everything a stolen password gave. Only sessions manage keys
                    // (a key cannot change the password), so the caller is the account's own session.
                    guard update.keepAPIKeys != true else { return 0 }
                    return try await revokeAllAPIKeys(
                        of: current.id, reason: .passwordChanged,
                        actor: (actorID(current, pseudonym: pseudonym), current.role.rawValue), on: connection, logger: logger)
                }
                return nil
            }
        } catch let error where PostgresErrors.unwrapTransaction(error) is TimeZoneStore.UnknownZone {
            throw AccountError.invalid([FieldError(field: "timeZone", message: TimeZoneName.message)])
        }
        return UpdatedAccount(account: try await account(of: principal, logger: logger), revokedAPIKeys: revokedAPIKeys)
    }

    /// Erases the caller's account; the audit log keeps only the pseudonym.
    package func erase(_ principal: Principal, password: String, clientAddress: String, logger: Logger) async throws {
        guard principal.role != .auditor else { throw WrongRole() }
        let current = try await account(of: principal, logger: logger)
        guard try await checkPassword(password, of: current, clientAddress: clientAddress, logger: logger) else {
            throw AccountError.wrongPassword
        }
        let pseudonym = try await pseudonymizer.pseudonym(for: principal.accountID, logger: logger)
        try await client.withTransaction(logger: logger) { connection in
            try await LongStatements.allow(on: connection, logger: logger)  // the cascade removes every sample
            if current.role == .user {
                try await singleRequests.releaseForErasure(userID: principal.accountID, on: connection, logger: logger)
            }
            if current.role == .thirdParty {
                // Its group requests outlive it for the auditors; its subscriptions must not go on releasing
                // (and spending people's caps) for a company that no longer exists.
                try await GroupRequestStore.endSubscriptions(of: principal.accountID, on: connection, logger: logger)
                // Its single requests outlive it too: they are the people's history.
                try await singleRequests.releaseForCompanyErasure(thirdPartyID: principal.accountID, on: connection, logger: logger)
            }
            try await AccountStore.delete(accountID: principal.accountID, on: connection, logger: logger)
            try await AuditLog.append(
                AuditEvent(
                    actorID: actorID(current, pseudonym: pseudonym), actorRole: current.role.rawValue, action: AuditAction.accountErased,
                    subject: pseudonym, details: ["role": .string(current.role.rawValue)]),
                on: connection, logger: logger)
        }
        logger.info("account erased", metadata: ["account.role": "\(current.role.rawValue)"])
    }

    /// Checks the password of a signed-in caller through the login throttle: a stolen session must not be
    /// a way to guess the password without the limits a login has (the same account bucket, so guesses
    /// here and at the login count together). Throws `tooManyAttempts` when the account is blocked.
    private func checkPassword(_ password: String, of account: Account, clientAddress: String, logger: Logger) async throws -> Bool {
        let attempt = try await throttle.reserve(email: account.email, clientAddress: clientAddress, logger: logger)
        let stored =
            try await client.withConnection { try await AccountStore.passwordHash(accountID: account.id, on: $0, logger: logger) }
            ?? timingDecoyHash
        let plausible = password.count <= PasswordPolicy.maximumLength
        guard try await hasher.verify(plausible ? password : "", against: stored), plausible else { return false }
        try await throttle.forgive(attempt, logger: logger)
        return true
    }

    /// People appear in the audit log only as pseudonyms; companies and auditors by account id.
    private func actorID(_ account: Account, pseudonym: String) -> String {
        account.role == .user ? pseudonym : account.id.uuidString.lowercased()
    }

    private static func conflict(for error: any Error) -> AccountError? {
        switch PostgresErrors.uniqueViolation(in: error) {
        case "accounts_email_key": .emailTaken
        case "users_fiscal_code_key": .fiscalCodeTaken
        case "third_parties_vat_number_key": .vatNumberTaken
        default: nil
        }
    }
}
