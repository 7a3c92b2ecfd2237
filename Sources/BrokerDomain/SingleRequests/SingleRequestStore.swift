import Foundation
import Logging
import PostgresNIO

/// The SQL of single requests. State changes are single `UPDATE … WHERE status = …` statements, so two
/// concurrent decisions on one request are settled by the row lock: one changes it, the other finds nothing.
package enum SingleRequestStore {
    /// The columns every read returns; `now()` comes along so expiry is judged by the database's clock.
    /// An erased sender's requests stay (the people's history): its name and VAT number went with its
    /// account, so every read joins `third_parties` by LEFT JOIN and shows it as "Erased company".
    static let selection = """
        SELECT r.id, r.third_party_id, coalesce(t.company_name, '\(erasedCompanyName)') AS company_name,
               coalesce(t.vat_number, '') AS vat_number, r.user_id, r.subject_email,
               r.subject_fiscal_code, r.types, r.purpose, r.window_from, r.window_to, \(effectiveStatus) AS status, r.created_at,
               r.decided_at, r.subscription_days, r.ends_at, r.ended_at, r.ended_by, r.expires_at,
               r.refusal_unseen, r.withdrawn_at, now() AS now, r.purpose_code,
               r.asked_types, r.asked_window_from, r.asked_window_to, r.asked_subscription_days, r.grant_id
        """

    static let erasedCompanyName = "Erased company"

    /// A request's status as of now: a pending request whose `expires_at` has passed is expired, whether
    /// or not the row says so yet (no job has to run at the moment it lapses).
    static let effectiveStatus = "(CASE WHEN r.status = 'pending' AND r.expires_at <= now() THEN 'expired' ELSE r.status END)"

    /// A request's status as its sender is shown it (`SingleRequest.seenBySender`): a refusal the sender may
    /// not see looks like a request to nobody, pending until it expires; cancelled once the sender withdrew it.
    static let senderStatus = """
        (CASE WHEN r.status = 'refused' AND r.refusal_unseen THEN
                  CASE WHEN r.withdrawn_at IS NOT NULL THEN 'cancelled' WHEN r.expires_at <= now() THEN 'expired' ELSE 'pending' END
              ELSE \(effectiveStatus) END)
        """

    /// The sender's name for the subject, as the one-pending-request index keys it.
    static let subjectKey = "coalesce(subject_fiscal_code, subject_email)"

    /// Inside an UPDATE of `single_requests`: how far the person's data had arrived at this moment (what a
    /// one-off acceptance or a subscription's end releases up to).
    static let personsLastArrival =
        "coalesce((SELECT last_arrival FROM sample_arrivals a WHERE a.user_id = single_requests.user_id), 0)"

    static func request(from row: PostgresRow) throws -> SingleRequest {
        let columns = row.makeRandomAccess()
        let status = SingleRequest.Status(rawValue: try columns["status"].decode(String.self)) ?? .pending
        let now = try columns["now"].decode(Date.self)
        let unseenRefusal =
            try columns["refusal_unseen"].decode(Bool.self) && status == .refused
            ? SingleRequest.UnseenRefusal(
                expiresAt: try columns["expires_at"].decode(Date.self), withdrawnAt: try columns["withdrawn_at"].decode(Date?.self), now: now)
            : nil
        let days = try columns["subscription_days"].decode(Int?.self)
        let askedDays = try columns["asked_subscription_days"].decode(Int?.self)
        let endsAt = try columns["ends_at"].decode(Date?.self)
        let endedAt = try columns["ended_at"].decode(Date?.self)
        let decidedAt = try columns["decided_at"].decode(Date?.self)
        let types = try columns["types"].decode([Int16].self).compactMap(RequestedType.init(code:))
        let windowFrom = try columns["window_from"].decode(Date?.self)
        let windowTo = try columns["window_to"].decode(Date?.self)
        let asked = ConsentTerms(
            types: try columns["asked_types"].decode([Int16].self).compactMap(RequestedType.init(code:)),
            windowFrom: try columns["asked_window_from"].decode(Date?.self), windowTo: try columns["asked_window_to"].decode(Date?.self),
            subscriptionDays: askedDays)
        let granted = ConsentTerms(types: types, windowFrom: windowFrom, windowTo: windowTo, subscriptionDays: days)
        let grant = try columns["grant_id"].decode(UUID?.self).map { id in
            ConsentGrant(id: id, terms: granted, grantedAt: decidedAt ?? now, narrowed: granted != asked)
        }
        let endedBy = try columns["ended_by"].decode(String?.self).flatMap(SingleRequest.Subscription.Party.init(rawValue:))
        return SingleRequest(
            id: try columns["id"].decode(UUID.self),
            thirdParty: .init(
                id: try columns["third_party_id"].decode(UUID.self),
                companyName: try columns["company_name"].decode(String.self),
                vatNumber: try columns["vat_number"].decode(String.self)),
            userID: try columns["user_id"].decode(UUID?.self),
            subject: .init(
                email: try columns["subject_email"].decode(String?.self),
                fiscalCode: try columns["subject_fiscal_code"].decode(String?.self)),
            types: types,
            purpose: try columns["purpose"].decode(String.self),
            windowFrom: windowFrom,
            windowTo: windowTo,
            asked: asked,
            grant: grant,
            status: status,
            createdAt: try columns["created_at"].decode(Date.self),
            decidedAt: decidedAt,
            subscription: askedDays.map { askedDays in
                // The person accepted without a subscription: it ended, by them, as they accepted.
                if status == .accepted && days == nil {
                    return SingleRequest.Subscription(days: askedDays, status: .ended, endsAt: nil, endedAt: decidedAt, endedBy: .user)
                }
                return SingleRequest.Subscription(
                    days: askedDays,
                    status: SingleRequest.Subscription.status(requestStatus: status, endsAt: endsAt, endedAt: endedAt, now: now),
                    endsAt: endsAt, endedAt: endedAt, endedBy: endedBy)
            },
            unseenRefusal: unseenRefusal,
            expiresAt: try columns["expires_at"].decode(Date.self),
            // The column's CHECK admits only the value set's codes.
            purposeCode: PurposeOfUse(code: try columns["purpose_code"].decode(String.self)) ?? PurposeOfUse.storedBeforeCodes)
    }

    static func collect(_ rows: PostgresRowSequence) async throws -> [SingleRequest] {
        var requests: [SingleRequest] = []
        for try await row in rows { requests.append(try request(from: row)) }
        return requests
    }

    // MARK: Creation

    /// The active person with this email or fiscal code.
    static func personID(email: String?, fiscalCode: String?, on connection: PostgresConnection, logger: Logger) async throws -> UUID? {
        try await connection.query(
            """
            SELECT a.id FROM accounts a JOIN users u ON u.account_id = a.id
            WHERE a.status = 'active' AND (a.email = \(email) OR u.fiscal_code = \(fiscalCode))
            """, logger: logger
        ).collect().first?.decode(UUID.self)
    }

    /// Waits for a concurrent block of this person to commit (it locks the person's account row for update),
    /// so the block check that follows sees it. The row is read so a lock time-out is thrown here, not met
    /// by the next statement as "transaction aborted".
    /// With no person (nil) the same statement runs and finds nothing, so both paths take the same time.
    static func lockPersonAgainstBlocks(_ userID: UUID?, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("SELECT 1 FROM accounts WHERE id = \(userID) FOR SHARE", logger: logger).collect()
    }

    /// Inserts the request, pending until `expiresAt` (the sender's choice, already checked against the
    /// service's clock) or else `expiryDays` from the database's now. `userID` is the active person the subject
    /// names, if any; a person who blocked the sender does not receive it either. Either way the request is
    /// stored alike, to nobody (`user_id` NULL) when it reaches no one, so the sender learns nothing from
    /// the answer. A second pending request of the same sender to the same subject (as typed) fails on the
    /// unique partial index (23505); one whose time ran out is marked expired first, so it no longer counts.
    static func insert(
        thirdPartyID: UUID, userID: UUID?, subject: SingleRequest.Subject, types: [RequestedType], purpose: String,
        windowFrom: String?, windowTo: String?, subscriptionDays: Int?, expiryDays: Int, expiresAt: String?, purposeCode: PurposeOfUse,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> SingleRequest {
        let codes = types.map(\.code)
        let key = subject.fiscalCode ?? subject.email
        try await connection.query(
            """
            UPDATE single_requests SET status = 'expired'
            WHERE third_party_id = \(thirdPartyID) AND \(unescaped: subjectKey) = \(key) AND status = 'pending' AND expires_at <= now()
            """, logger: logger)
        // A refusal the sender is shown as pending holds the subject as a pending request would: a second
        // request then gets the same 409, so it cannot tell a refusal from a request still waiting.
        let heldByUnseenRefusal = try await connection.query(
            """
            SELECT 1 FROM single_requests
            WHERE third_party_id = \(thirdPartyID) AND \(unescaped: subjectKey) = \(key) AND status = 'refused'
              AND refusal_unseen AND withdrawn_at IS NULL AND expires_at > now()
            """, logger: logger
        ).collect()
        guard heldByUnseenRefusal.isEmpty else { throw SingleRequestError.duplicatePending }
        let rows = try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO single_requests (third_party_id, user_id, subject_email, subject_fiscal_code, types, purpose,
                                             window_from, window_to, subscription_days, expires_at, purpose_code,
                                             asked_types, asked_window_from, asked_window_to, asked_subscription_days)
                SELECT \(thirdPartyID),
                       CASE WHEN NOT EXISTS (SELECT 1 FROM blocks WHERE user_id = \(userID) AND third_party_id = \(thirdPartyID))
                            THEN \(userID)::uuid END,
                       \(subject.email), \(subject.fiscalCode), \(codes), \(purpose),
                       \(windowFrom)::timestamptz, \(windowTo)::timestamptz, \(subscriptionDays),
                       coalesce(\(expiresAt)::timestamptz, now() + make_interval(days => \(expiryDays)::int)),
                       \(purposeCode.code),
                       \(codes), \(windowFrom)::timestamptz, \(windowTo)::timestamptz, \(subscriptionDays)
                RETURNING *
            )
            \(unescaped: selection) FROM inserted r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            """, logger: logger)
        guard let request = try await collect(rows).first else { throw AccountStoreError.noRow }
        return request
    }

    /// Hands a newly activated person the pending requests that were sent to their email or fiscal code
    /// while no active person had it: a request to nobody reaches the person once they exist.
    static func deliverWaiting(to userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE single_requests r SET user_id = a.id
            FROM accounts a JOIN users u ON u.account_id = a.id
            WHERE a.id = \(userID) AND a.status = 'active'
              AND r.status = 'pending' AND r.user_id IS NULL AND r.expires_at > now()
              AND (r.subject_email = a.email OR r.subject_fiscal_code = u.fiscal_code)
              AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.user_id = a.id AND b.third_party_id = r.third_party_id)
            """, logger: logger)
    }

    // MARK: Reads

    /// One request, if the account is its sender or its subject.
    static func request(id: UUID, visibleTo accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> SingleRequest? {
        let rows = try await connection.query(
            """
            \(unescaped: selection) FROM single_requests r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            WHERE r.id = \(id) AND (r.third_party_id = \(accountID) OR r.user_id = \(accountID))
            """, logger: logger)
        return try await collect(rows).first
    }

    /// A page of the requests sent (`asSender`) or received by the account, newest first.
    static func list(
        accountID: UUID, asSender: Bool, status: SingleRequest.Status?, after cursor: PageKey?, limit: Int,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> [SingleRequest] {
        let after = cursor.map { Timestamp.postgresText($0.time) }
        let party = asSender ? "r.third_party_id" : "r.user_id"
        let rows = try await connection.query(
            """
            \(unescaped: selection) FROM single_requests r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            WHERE \(unescaped: party) = \(accountID)
              AND (\(status?.rawValue)::text IS NULL OR \(unescaped: asSender ? senderStatus : effectiveStatus) = \(status?.rawValue))
              AND (\(after)::timestamptz IS NULL OR (r.created_at, r.id) < (\(after)::timestamptz, \(cursor?.id)))
            ORDER BY r.created_at DESC, r.id DESC
            LIMIT \(limit + 1)
            """, logger: logger)
        return try await collect(rows)
    }

    // MARK: Decisions

    package enum Decision: String, Sendable {
        case refuse = "refused"
        case cancel = "cancelled"
    }

    /// Applies a refusal (by the subject) or a cancellation (by the sender) to a pending request of the account.
    /// Nil when the request is not pending (or not theirs): the caller tells those apart.
    static func decide(
        _ decision: Decision, requestID: UUID, by accountID: UUID, on connection: PostgresConnection, logger: Logger
    ) async throws -> SingleRequest? {
        let party = decision == .cancel ? "third_party_id" : "user_id"
        let rows = try await connection.query(
            """
            WITH changed AS (
                UPDATE single_requests SET
                    status = \(decision.rawValue),
                    decided_at = now(),
                    refusal_unseen = \(decision.rawValue) = 'refused'
                WHERE id = \(requestID) AND \(unescaped: party) = \(accountID) AND status = 'pending' AND expires_at > now()
                RETURNING *
            )
            \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            """, logger: logger)
        return try await collect(rows).first
    }

    /// The person's pending request, locked until the transaction ends so the grant is checked against
    /// what it asks and nothing (a cancellation, a block) changes it meanwhile. Nil when there is none such.
    static func pendingForDecision(requestID: UUID, userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> SingleRequest?
    {
        let rows = try await connection.query(
            """
            \(unescaped: selection) FROM single_requests r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            WHERE r.id = \(requestID) AND r.user_id = \(userID) AND r.status = 'pending' AND r.expires_at > now()
            FOR UPDATE OF r
            """, logger: logger)
        return try await collect(rows).first
    }

    /// Whether the request is one Track4Run sent for a run (its terms are the run's: not narrowed).
    static func isRunRequest(_ requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await !connection.query("SELECT 1 FROM run_participants WHERE request_id = \(requestID)", logger: logger).collect().isEmpty
    }

    /// Accepts a pending request of the person with the terms they granted (checked by the caller to lie
    /// within what was asked): from now on the request's terms are the grant's. A one-off grant releases
    /// what had arrived by now; a subscription's clock starts now. Nil when it is no longer pending.
    static func accept(
        requestID: UUID, by userID: UUID, granting terms: ConsentTerms, on connection: PostgresConnection, logger: Logger
    ) async throws -> SingleRequest? {
        let from = terms.windowFrom.map(Timestamp.postgresText)
        let to = terms.windowTo.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            WITH changed AS (
                UPDATE single_requests SET
                    status = 'accepted', decided_at = now(), refusal_unseen = false, grant_id = gen_random_uuid(),
                    types = \(terms.types.map(\.code))::int2[], window_from = \(from)::timestamptz, window_to = \(to)::timestamptz,
                    subscription_days = \(terms.subscriptionDays)::int,
                    accepted_arrival = \(unescaped: personsLastArrival),
                    ends_at = now() + make_interval(days => \(terms.subscriptionDays)::int)
                WHERE id = \(requestID) AND user_id = \(userID) AND status = 'pending' AND expires_at > now()
                RETURNING *
            )
            \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            """, logger: logger)
        return try await collect(rows).first
    }

    /// The sender's cancellation of a request the person refused while the sender was shown it as pending:
    /// the sender sees it cancelled from now on, the person their refusal. Nil when there is none such.
    static func withdrawUnseenRefusal(requestID: UUID, by thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws -> SingleRequest?
    {
        let rows = try await connection.query(
            """
            WITH changed AS (
                UPDATE single_requests SET withdrawn_at = now()
                WHERE id = \(requestID) AND third_party_id = \(thirdPartyID) AND status = 'refused' AND refusal_unseen
                  AND withdrawn_at IS NULL AND expires_at > now()
                RETURNING *
            )
            \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            """, logger: logger)
        return try await collect(rows).first
    }

    /// Ends a live subscription now, recording how far the person's data had arrived. Nil when there is
    /// no live subscription (or the request is not the account's).
    static func endSubscription(
        requestID: UUID, by accountID: UUID, as party: SingleRequest.Subscription.Party,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> SingleRequest? {
        let column = party == .thirdParty ? "third_party_id" : "user_id"
        let rows = try await connection.query(
            """
            WITH changed AS (
                UPDATE single_requests SET
                    ended_at = now(), ended_by = \(party.rawValue),
                    ended_arrival = \(unescaped: personsLastArrival)
                WHERE id = \(requestID) AND \(unescaped: column) = \(accountID) AND status = 'accepted'
                  AND subscription_days IS NOT NULL AND ended_at IS NULL AND ends_at > now()
                RETURNING *
            )
            \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            """, logger: logger)
        return try await collect(rows).first
    }

    // MARK: Erasure and blocks

    /// What a person's erasure does to their requests, before the account row goes: pending ones are refused,
    /// live subscriptions end by the user, and the subject's identifiers are cleared (but see below). Returns the ended
    /// subscriptions (for their webhooks).
    static func releaseForErasure(userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> (refused: [SingleRequest], ended: [SingleRequest])
    {
        let refused = try await collect(
            connection.query(
                """
                WITH changed AS (
                    UPDATE single_requests SET status = 'refused', decided_at = now(), refusal_unseen = true
                    WHERE user_id = \(userID) AND status = 'pending' AND expires_at > now() RETURNING *
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
        let ended = try await collect(
            connection.query(
                """
                WITH changed AS (
                    UPDATE single_requests SET ended_at = now(), ended_by = 'user',
                        ended_arrival = \(unescaped: personsLastArrival)
                    WHERE user_id = \(userID) AND status = 'accepted' AND subscription_days IS NOT NULL
                      AND ended_at IS NULL AND ends_at > now()
                    RETURNING *
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
        // The requests the sender is still shown as pending keep the subject as the sender typed it, as a
        // request to nobody does (cleared, it would tell the sender that a person was there and left). The
        // account's deletion then unlinks them (`user_id` SET NULL): they are requests to nobody from here on.
        try await connection.query(
            """
            UPDATE single_requests SET subject_email = NULL, subject_fiscal_code = NULL
            WHERE user_id = \(userID)
              AND NOT (status = 'refused' AND refusal_unseen AND withdrawn_at IS NULL AND expires_at > now())
            """, logger: logger)
        return (refused, ended)
    }

    /// Refuses the pending requests of a blocked third party to the person.
    static func refusePending(from thirdPartyID: UUID, to userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws -> [SingleRequest]
    {
        try await collect(
            connection.query(
                """
                WITH changed AS (
                    UPDATE single_requests SET status = 'refused', decided_at = now(), refusal_unseen = true
                    WHERE user_id = \(userID) AND third_party_id = \(thirdPartyID) AND status = 'pending' AND expires_at > now()
                    RETURNING *
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
    }

    /// Ends the live subscriptions of a third party the person just blocked, by the user, recording how far
    /// the person's data had arrived (as the person ending each one would).
    static func endSubscriptions(from thirdPartyID: UUID, to userID: UUID, on connection: PostgresConnection, logger: Logger)
        async throws -> [SingleRequest]
    {
        try await collect(
            connection.query(
                """
                WITH changed AS (
                    UPDATE single_requests SET ended_at = now(), ended_by = 'user',
                        ended_arrival = \(unescaped: personsLastArrival)
                    WHERE user_id = \(userID) AND third_party_id = \(thirdPartyID) AND status = 'accepted'
                      AND subscription_days IS NOT NULL AND ended_at IS NULL AND ends_at > now()
                    RETURNING *
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
    }

    /// Claims up to `limit` subscriptions whose `endsAt` has passed and whose expiry nobody has announced,
    /// marking them announced. SKIP LOCKED: several server instances never claim one expiry twice.
    static func claimUnannouncedExpiries(limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [SingleRequest] {
        try await collect(
            connection.query(
                """
                WITH due AS (
                    SELECT id FROM single_requests
                    WHERE status = 'accepted' AND ended_at IS NULL AND NOT expiry_announced AND ends_at <= now()
                    ORDER BY ends_at
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), changed AS (
                    UPDATE single_requests r SET expiry_announced = true FROM due WHERE r.id = due.id RETURNING r.*
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
    }

    /// What a company's erasure does to its requests, before its account goes: pending ones are cancelled
    /// and live subscriptions end by the third party (nothing more is released to a company that is gone).
    /// The requests themselves stay, for the people's history and the audit trail.
    static func releaseForCompanyErasure(thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> (cancelled: [SingleRequest], ended: [SingleRequest])
    {
        let cancelled = try await collect(
            connection.query(
                """
                WITH changed AS (
                    UPDATE single_requests SET status = 'cancelled', decided_at = now()
                    WHERE third_party_id = \(thirdPartyID) AND status = 'pending' AND expires_at > now() RETURNING *
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
        let ended = try await collect(
            connection.query(
                """
                WITH changed AS (
                    UPDATE single_requests SET ended_at = now(), ended_by = 'third_party',
                        ended_arrival = \(unescaped: personsLastArrival)
                    WHERE third_party_id = \(thirdPartyID) AND status = 'accepted' AND subscription_days IS NOT NULL
                      AND ended_at IS NULL AND ends_at > now()
                    RETURNING *
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
        return (cancelled, ended)
    }
}
