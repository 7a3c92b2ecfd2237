import Foundation
import Logging
import PostgresNIO

/// The rules of single requests: who may create, see, decide and end them, and what each step records
/// (an audit event and, for the sender, a webhook event, in the same transaction as the change).
package struct SingleRequestService: Sendable {
    package let client: DatabasePool
    package let pseudonymizer: Pseudonymizer
    /// Days a request stays pending before it expires unanswered when its sender chose no `expiresAt`
    /// (`PENDING_REQUEST_EXPIRY_DAYS`).
    package let pendingExpiryDays: Int
    /// What download cursors are sealed with (`DownloadCursor`).
    let cursorKey: ServerSecret
    /// What a sender's `expiresAt` is checked against.
    let clock: WallClock
    /// Signs a receipt of every grant and of its end, on the change's transaction (none without a key).
    package let receipts: ConsentReceipts
    /// Where the mails of requests are written (to the person: a new request, a first download, a
    /// subscription ending; to the company: granted, expired). Nil in tools, which mail nobody.
    package let outbox: MailOutbox?

    /// Where a download's chunks are read: a standby that has replayed the primary's position at the plan,
    /// or the primary (`DatabaseReads.read(replayedPast:)`).
    package let reads: DatabaseReads

    package init(
        client: DatabasePool, pseudonymizer: Pseudonymizer, pendingExpiryDays: Int = 30, clock: WallClock = .system,
        receipts: ConsentReceipts? = nil, outbox: MailOutbox? = nil, reads: DatabaseReads? = nil
    ) {
        self.reads = reads ?? DatabaseReads(primary: client)
        self.outbox = outbox
        self.client = client
        self.pseudonymizer = pseudonymizer
        self.pendingExpiryDays = pendingExpiryDays
        self.cursorKey = ServerSecret("download_cursor_key", client: client)
        self.clock = clock
        self.receipts = receipts ?? ConsentReceipts(client: client, key: nil, issuer: "")
    }

    package static let purposeLength = 1...500
    package static let subscriptionDays = 1...3650
    /// How far ahead a request may expire, whether its sender or `PENDING_REQUEST_EXPIRY_DAYS` chose it:
    /// a refusal reads pending to the sender until then, so this bounds how long a person's "no" is hidden.
    package static let maximumExpiryDays = 90
    /// How soon a sender may make a request expire: the person gets at least this long to see it.
    package static let minimumExpiryLead: TimeInterval = 3600

    package struct Creation: Sendable {
        package var email: String?
        package var fiscalCode: String?
        package var types: [String]
        package var purpose: String
        package var windowFrom: String?
        package var windowTo: String?
        package var subscriptionDays: Int?
        /// An HL7 PurposeOfUse code (`PurposeOfUse`); required, nil when the sender gave none.
        package var purposeCode: String?
        /// RFC 3339; nil: `PENDING_REQUEST_EXPIRY_DAYS` from now.
        package var expiresAt: String?

        package init(
            email: String?, fiscalCode: String?, types: [String], purpose: String, windowFrom: String?, windowTo: String?, subscriptionDays: Int?,
            purposeCode: String?, expiresAt: String? = nil
        ) {
            (self.email, self.fiscalCode, self.types, self.purpose) = (email, fiscalCode, types, purpose)
            (self.windowFrom, self.windowTo, self.subscriptionDays) = (windowFrom, windowTo, subscriptionDays)
            (self.purposeCode, self.expiresAt) = (purposeCode, expiresAt)
        }
    }

    // MARK: Creation

    /// Creates a request. The answer is the same whether the subject names an active person, nobody, an
    /// erased person or a person who blocked the sender: a company must not learn who is registered from
    /// it. A request that reaches nobody is stored all the same (to nobody: invisible to everyone but its
    /// sender, for whom it stays pending until it expires), and reaches a person who activates an account
    /// with that email or fiscal code meanwhile. What the person has, or that they exist, the sender
    /// learns only when they accept. Both paths run the same statements, so their times match too.
    package func create(_ creation: Creation, by principal: Principal, logger: Logger) async throws -> SingleRequest {
        guard principal.role == .thirdParty else { throw WrongRole("Only third parties send single requests.") }
        let valid = try Self.validate(creation, now: clock.now)
        let expiryDays = pendingExpiryDays
        return try await withMappedErrors {
            try await client.withTransaction(logger: logger) { connection in
                let userID = try await SingleRequestStore.personID(
                    email: valid.subject.email, fiscalCode: valid.subject.fiscalCode, on: connection, logger: logger)
                try await SingleRequestStore.lockPersonAgainstBlocks(userID, on: connection, logger: logger)
                let request = try await SingleRequestStore.insert(
                    thirdPartyID: principal.accountID, userID: userID, subject: valid.subject, types: valid.types,
                    purpose: valid.purpose, windowFrom: valid.windowFrom.map(Timestamp.postgresText),
                    windowTo: valid.windowTo.map(Timestamp.postgresText), subscriptionDays: valid.subscriptionDays,
                    expiryDays: expiryDays, expiresAt: valid.expiresAt.map(Timestamp.postgresText), purposeCode: valid.purposeCode,
                    on: connection, logger: logger)
                try await audit(
                    AuditAction.singleRequestCreated, request, actor: .thirdParty,
                    details: [
                        "types": .string(valid.types.map(\.rawValue).joined(separator: ",")),
                        "subscriptionDays": .int(valid.subscriptionDays ?? 0),
                        "purposeCode": .string(valid.purposeCode.code),
                        "expiresAt": .string(Timestamp.rfc3339(request.expiresAt)),
                    ],
                    on: connection, logger: logger)
                return request
            }
        }
    }

    struct ValidCreation {
        var subject: SingleRequest.Subject
        var types: [RequestedType]
        var purpose: String
        var windowFrom: Date?
        var windowTo: Date?
        var subscriptionDays: Int?
        var purposeCode: PurposeOfUse
        /// Nil: the server's default (`pendingExpiryDays`), computed by the database as it stores the request.
        var expiresAt: Date?
    }

    /// Every problem of the body at once, as field errors. `now` is the service's clock, which a chosen
    /// `expiresAt` must lie at least `minimumExpiryLead` and at most `maximumExpiryDays` ahead of.
    static func validate(_ creation: Creation, now: Date) throws -> ValidCreation {
        var errors: [FieldError] = []
        var email: String?
        var fiscalCode: String?
        switch (creation.email, creation.fiscalCode) {
        case (nil, nil), (.some, .some):
            errors.append(FieldError(field: "subject", message: "name the person by exactly one of email or fiscalCode"))
        case (let text?, nil):
            if case .success(let address) = EmailAddress.parse(text) {
                email = address.value
            } else {
                errors.append(FieldError(field: "subject.email", message: "is not an email address"))
            }
        case (nil, let text?):
            if case .success(let code) = FiscalCode.parse(text) {
                fiscalCode = code.value
            } else {
                errors.append(FieldError(field: "subject.fiscalCode", message: "is not a valid codice fiscale"))
            }
        }
        var types: [RequestedType] = []
        if creation.types.isEmpty { errors.append(FieldError(field: "types", message: "name at least one type")) }
        for (index, name) in creation.types.enumerated() {
            if let type = RequestedType(rawValue: name) {
                if types.contains(type) { errors.append(FieldError(field: "types[\(index)]", message: "is repeated")) }
                types.append(type)
            } else {
                errors.append(FieldError(field: "types[\(index)]", message: "is not a sample type nor position"))
            }
        }
        let purpose = creation.purpose.trimmingCharacters(in: .whitespacesAndNewlines)
        if !purposeLength.contains(purpose.count) {
            errors.append(FieldError(field: "purpose", message: "must be \(purposeLength.lowerBound)–\(purposeLength.upperBound) characters"))
        }
        let from = time(creation.windowFrom, field: "window.from", into: &errors)
        let to = time(creation.windowTo, field: "window.to", into: &errors)
        if let from, let to, from > to { errors.append(FieldError(field: "window.from", message: "must not be after window.to")) }
        if let days = creation.subscriptionDays, !subscriptionDays.contains(days) {
            errors.append(FieldError(field: "subscription.days", message: "must be \(subscriptionDays.lowerBound)–\(subscriptionDays.upperBound)"))
        }
        let purposeCode = Self.purposeCode(creation.purposeCode, field: "purposeCode", into: &errors)
        let expiresAt = time(creation.expiresAt, field: "expiresAt", into: &errors)
        if let expiresAt {
            if expiresAt < now.addingTimeInterval(minimumExpiryLead) {
                errors.append(FieldError(field: "expiresAt", message: "must be at least an hour from now"))
            } else if expiresAt > now.addingTimeInterval(Double(maximumExpiryDays) * 86_400) {
                errors.append(FieldError(field: "expiresAt", message: "must be at most \(maximumExpiryDays) days from now"))
            }
        }
        guard errors.isEmpty, let purposeCode else { throw SingleRequestError.invalid(errors) }
        return ValidCreation(
            subject: .init(email: email, fiscalCode: fiscalCode), types: types, purpose: purpose, windowFrom: from,
            windowTo: to, subscriptionDays: creation.subscriptionDays, purposeCode: purposeCode, expiresAt: expiresAt)
    }

    /// The code a sender gave, or the field's error: missing, or none of the value set.
    package static func purposeCode(_ text: String?, field: String, into errors: inout [FieldError]) -> PurposeOfUse? {
        let codes = PurposeOfUse.allCases.map(\.code).joined(separator: ", ")
        guard let text, !text.isEmpty else {
            errors.append(FieldError(field: field, message: "is required: one of \(codes)"))
            return nil
        }
        guard let code = PurposeOfUse(code: text) else {
            errors.append(FieldError(field: field, message: "must be one of \(codes)"))
            return nil
        }
        return code
    }

    /// An RFC 3339 time the caller sent, or a field error naming it.
    static func time(_ text: String?, field: String, into errors: inout [FieldError]) -> Date? {
        guard let text else { return nil }
        if let date = Timestamp.parse(text) { return date }
        errors.append(FieldError(field: field, message: "must be an RFC 3339 time such as 2026-03-01T08:00:00Z"))
        return nil
    }

    // MARK: Reads

    package func request(id: UUID, for principal: Principal, logger: Logger) async throws -> SingleRequest {
        guard principal.role != .auditor else { throw WrongRole("Auditors see no single requests.") }
        return try await client.withConnection { connection in
            guard let request = try await SingleRequestStore.request(id: id, visibleTo: principal.accountID, on: connection, logger: logger)
            else { throw SingleRequestError.notFound }
            return Self.asSeen(request, by: principal)
        }
    }

    /// The request as `principal` is shown it: a sender never sees a refusal (`SingleRequest.seenBySender`).
    static func asSeen(_ request: SingleRequest, by principal: Principal) -> SingleRequest {
        principal.role == .thirdParty ? request.seenBySender : request
    }

    /// Sent requests for a third party, received ones for a person.
    package func list(
        for principal: Principal, status: SingleRequest.Status?, page: PageRequest, logger: Logger
    ) async throws -> Page<SingleRequest> {
        guard principal.role != .auditor else { throw WrongRole("Auditors see no single requests.") }
        let (limit, after) = try page.readByTimeAndID()
        let rows = try await client.withConnection { connection in
            try await SingleRequestStore.list(
                accountID: principal.accountID, asSender: principal.role == .thirdParty, status: status, after: after,
                limit: limit, on: connection, logger: logger)
        }
        return Page(rows: rows.map { Self.asSeen($0, by: principal) }, limit: limit) { PageKey(time: $0.createdAt, id: $0.id) }
    }

    // MARK: Decisions

    package func refuse(id: UUID, by principal: Principal, logger: Logger) async throws -> SingleRequest {
        try await decide(.refuse, id: id, by: principal, logger: logger)
    }

    package func cancel(id: UUID, by principal: Principal, logger: Logger) async throws -> SingleRequest {
        try await decide(.cancel, id: id, by: principal, logger: logger)
    }

    private func decide(_ decision: SingleRequestStore.Decision, id: UUID, by principal: Principal, logger: Logger) async throws
        -> SingleRequest
    {
        let expectedRole: Role = decision == .cancel ? .thirdParty : .user
        guard principal.role == expectedRole else {
            throw WrongRole(decision == .cancel ? "Only the sender cancels a request." : "Only the person asked accepts or refuses a request.")
        }
        return try await client.withTransaction(logger: logger) { connection in
            guard let request = try await SingleRequestStore.decide(decision, requestID: id, by: principal.accountID, on: connection, logger: logger)
            else {
                // The sender cancels what it is shown as pending, a refusal it may not see included.
                if decision == .cancel,
                    let withdrawn = try await SingleRequestStore.withdrawUnseenRefusal(
                        requestID: id, by: principal.accountID, on: connection, logger: logger)
                {
                    try await audit(
                        AuditAction.singleRequestCancelled, withdrawn, actor: .thirdParty, details: ["reason": .string("withdrawn after refusal")],
                        on: connection, logger: logger)
                    return withdrawn.seenBySender
                }
                throw try await whyUnchanged(id: id, principal: principal, on: connection, logger: logger)
            }
            switch decision {
            case .refuse:
                // No webhook: the sender may not learn of a refusal (`SingleRequest.seenBySender`).
                try await audit(AuditAction.singleRequestRefused, request, actor: .user, on: connection, logger: logger)
            case .cancel:
                try await audit(AuditAction.singleRequestCancelled, request, actor: .thirdParty, on: connection, logger: logger)
            }
            return request
        }
    }

    /// 404 when the request is not the caller's, else 409 with its current status.
    func whyUnchanged(id: UUID, principal: Principal, on connection: PostgresConnection, logger: Logger) async throws -> SingleRequestError {
        guard let current = try await SingleRequestStore.request(id: id, visibleTo: principal.accountID, on: connection, logger: logger)
        else { return .notFound }
        return .notPending(Self.asSeen(current, by: principal).status)
    }

    package func endSubscription(id: UUID, by principal: Principal, logger: Logger) async throws -> SingleRequest {
        let party: SingleRequest.Subscription.Party
        switch principal.role {
        case .user: party = .user
        case .thirdParty: party = .thirdParty
        case .auditor: throw WrongRole("Auditors see no single requests.")
        }
        return try await client.withTransaction(logger: logger) { connection in
            guard
                let request = try await SingleRequestStore.endSubscription(
                    requestID: id, by: principal.accountID, as: party, on: connection, logger: logger)
            else {
                guard let current = try await SingleRequestStore.request(id: id, visibleTo: principal.accountID, on: connection, logger: logger)
                else { throw SingleRequestError.notFound }
                throw SingleRequestError.noActiveSubscription(Self.whyNoActiveSubscription(Self.asSeen(current, by: principal)))
            }
            try await announceEnd(request, by: party, reason: "revoked", on: connection, logger: logger)
            return request
        }
    }

    static func whyNoActiveSubscription(_ request: SingleRequest) -> String {
        guard let subscription = request.subscription else { return "This request has no subscription." }
        switch subscription.status {
        case .pending: return "The request is still pending; its subscription has not started."
        case .ended where request.status != .accepted: return "The request was \(request.status.rawValue); its subscription never started."
        case .ended: return "The subscription has already ended."
        case .expired: return "The subscription has already expired."
        case .active: return "The subscription is active."
        }
    }

    /// The audit event, the consent receipt (`revoked`, as the sender is told) and the sender's webhook,
    /// which carries the receipt, of a subscription's end.
    /// `auditReason` is what the audit log records when it must say more than the sender is told.
    func announceEnd(
        _ request: SingleRequest, by party: SingleRequest.Subscription.Party, reason: String, auditReason: String? = nil,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let actor: Role = party == .user ? .user : .thirdParty
        try await audit(
            AuditAction.subscriptionEnded, request, actor: actor,
            details: ["endedBy": .string(party.rawValue), "reason": .string(auditReason ?? reason)], on: connection, logger: logger)
        var data = ["endedBy": party.rawValue, "reason": reason]
        data["receipt"] = try await receipts.issue(.revoked, for: request, endedBy: party, on: connection, logger: logger)?.jws
        try await WebhookOutboxStore.enqueue(
            .subscriptionEnded, to: request.thirdParty.id, requestID: request.id, data: data, on: connection, logger: logger)
    }

    // MARK: Audit

    /// Appends an event about a request; the person appears only as a pseudonym.
    func audit(
        _ action: String, _ request: SingleRequest, actor: Role, details: [String: AuditValue] = [:],
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let subject = try await request.userID.asyncMap { try await pseudonymizer.pseudonym(for: $0, on: connection, logger: logger) }
        let actorID = actor == .thirdParty ? request.thirdParty.id.uuidString.lowercased() : subject
        try await AuditLog.append(
            AuditEvent(
                actorID: actorID, actorRole: actor.rawValue, action: action, requestID: request.id, subject: subject,
                details: details),
            on: connection, logger: logger)
    }

    private func withMappedErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            if PostgresErrors.uniqueViolation(in: error) == "single_requests_one_pending_subject" { throw SingleRequestError.duplicatePending }
            throw PostgresErrors.unwrapTransaction(error)
        }
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
