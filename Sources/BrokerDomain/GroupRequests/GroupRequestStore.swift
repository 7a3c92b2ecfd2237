import Foundation
import Logging
import PostgresNIO

/// The SQL of the group requests themselves: creating, reading, ending, and the background refresh's queue.
/// Cohorts are in `GroupCohortStore`, releases in `GroupReleaseStore`, contributions in `AccessLogStore`.
package enum GroupRequestStore {
    static let selection = """
        SELECT g.id, g.third_party_id, coalesce(t.company_name, 'Erased company') AS company_name,
               coalesce(t.vat_number, '') AS vat_number, g.types, g.filters::text AS filters, g.age_min,
               g.age_max, g.sex::text AS sex, to_char(g.window_from, 'YYYY-MM-DD') AS window_from,
               to_char(g.window_to, 'YYYY-MM-DD') AS window_to, g.bucket, g.purpose, g.status, g.refusal_reason,
               g.cohort_size, g.created_at, g.subscription_days, g.ends_at, g.ended_at, now() AS now, g.cell_loss_micro,
               to_char(g.released_through, 'YYYY-MM-DD') AS released_through, g.purpose_code
        """

    static func request(from row: PostgresRow) throws -> GroupRequest {
        let columns = row.makeRandomAccess()
        let filters = try JSONDecoder().decode([GroupRequest.Filter].self, from: Data(try columns["filters"].decode(String.self).utf8))
        let endsAt = try columns["ends_at"].decode(Date?.self)
        let endedAt = try columns["ended_at"].decode(Date?.self)
        let now = try columns["now"].decode(Date.self)
        return GroupRequest(
            id: try columns["id"].decode(UUID.self),
            thirdParty: .init(
                id: try columns["third_party_id"].decode(UUID.self), companyName: try columns["company_name"].decode(String.self),
                vatNumber: try columns["vat_number"].decode(String.self)),
            types: try columns["types"].decode([Int16].self).compactMap(SampleType.init(code:)),
            filters: filters,
            demographics: .init(
                ageMin: try columns["age_min"].decode(Int?.self), ageMax: try columns["age_max"].decode(Int?.self),
                sex: try columns["sex"].decode(String?.self).flatMap(Sex.init(rawValue:))),
            windowFrom: CalendarDate(iso: try columns["window_from"].decode(String.self))!,
            windowTo: CalendarDate(iso: try columns["window_to"].decode(String.self))!,
            bucket: Statistics.Bucket(rawValue: try columns["bucket"].decode(String.self)) ?? .day,
            purpose: try columns["purpose"].decode(String.self),
            status: GroupRequest.Status(rawValue: try columns["status"].decode(String.self)) ?? .refused,
            refusalReason: try columns["refusal_reason"].decode(String?.self).flatMap(GroupRequest.RefusalReason.init(rawValue:)),
            cohortSize: try columns["cohort_size"].decode(Int?.self),
            createdAt: try columns["created_at"].decode(Date.self),
            subscription: try columns["subscription_days"].decode(Int?.self).map { days in
                let status: GroupRequest.Subscription.Status =
                    endedAt != nil ? .ended : (endsAt.map { $0 <= now } ?? false) ? .expired : .active
                return GroupRequest.Subscription(days: days, status: status, endsAt: endsAt, endedAt: endedAt)
            },
            cellLoss: try columns["cell_loss_micro"].decode(Int64?.self).map(PrivacyLoss.init(micro:)),
            releasedThrough: try columns["released_through"].decode(String?.self).flatMap(CalendarDate.init(iso:)),
            // The column's CHECK admits only the value set's codes.
            purposeCode: PurposeOfUse(code: try columns["purpose_code"].decode(String.self)) ?? PurposeOfUse.storedBeforeCodes)
    }

    static func collect(_ rows: PostgresRowSequence) async throws -> [GroupRequest] {
        var requests: [GroupRequest] = []
        for try await row in rows { requests.append(try request(from: row)) }
        return requests
    }

    static func insert(
        _ request: GroupRequestService.ValidCreation, thirdPartyID: UUID, status: GroupRequest.Status,
        reason: GroupRequest.RefusalReason?, cohort: [Int32]?, cohortSize: Int?, releasedThrough: CalendarDate?,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> GroupRequest {
        let filters = String(decoding: try JSONEncoder().encode(request.filters), as: UTF8.self)
        let rows = try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO group_requests (third_party_id, types, filters, age_min, age_max, sex, window_from, window_to, bucket,
                                            purpose, status, refusal_reason, cohort, cohort_size, subscription_days, ends_at,
                                            cell_loss_micro, released_through, purpose_code)
                VALUES (\(thirdPartyID), \(request.types.map(\.code)), \(filters)::jsonb, \(request.demographics.ageMin),
                        \(request.demographics.ageMax), \(request.demographics.sex?.rawValue), \(request.windowFrom.description)::date,
                        \(request.windowTo.description)::date, \(request.bucket.rawValue), \(request.purpose), \(status.rawValue),
                        \(reason?.rawValue), \(cohort)::int4[], \(cohortSize),
                        \(status == .accepted ? request.subscriptionDays : nil),
                        CASE WHEN \(status.rawValue) = 'accepted' AND \(request.subscriptionDays)::int IS NOT NULL
                             THEN now() + make_interval(days => \(request.subscriptionDays)::int) END,
                        \(request.cellLoss.micro), \(releasedThrough?.description)::date, \(request.purposeCode.code))
                RETURNING *
            )
            \(unescaped: selection) FROM inserted g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
            """, logger: logger)
        guard let request = try await collect(rows).first else { throw GroupRequestError.notFound }
        return request
    }

    // MARK: Reads

    /// One request; `sender` nil for auditors (who see every request).
    static func request(id: UUID, sender: UUID?, on connection: PostgresConnection, logger: Logger) async throws -> GroupRequest? {
        try await collect(
            connection.query(
                """
                \(unescaped: selection) FROM group_requests g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
                WHERE g.id = \(id) AND (\(sender)::uuid IS NULL OR g.third_party_id = \(sender))
                """, logger: logger)
        ).first
    }

    static func list(
        sender: UUID?, status: GroupRequest.Status?, after cursor: PageKey?, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> [GroupRequest] {
        let after = cursor.map { Timestamp.postgresText($0.time) }
        return try await collect(
            connection.query(
                """
                \(unescaped: selection) FROM group_requests g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
                WHERE (\(sender)::uuid IS NULL OR g.third_party_id = \(sender))
                  AND (\(status?.rawValue)::text IS NULL OR g.status = \(status?.rawValue))
                  AND (\(after)::timestamptz IS NULL OR (g.created_at, g.id) < (\(after)::timestamptz, \(cursor?.id)))
                ORDER BY g.created_at DESC, g.id DESC
                LIMIT \(limit + 1)
                """, logger: logger))
    }

    static func endSubscription(id: UUID, sender: UUID, on connection: PostgresConnection, logger: Logger) async throws -> GroupRequest? {
        try await collect(
            connection.query(
                """
                WITH changed AS (
                    UPDATE group_requests SET ended_at = now()
                    WHERE id = \(id) AND third_party_id = \(sender) AND status = 'accepted' AND subscription_days IS NOT NULL
                      AND ended_at IS NULL AND ends_at > now()
                    RETURNING *
                )
                \(unescaped: selection) FROM changed g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
                """, logger: logger)
        ).first
    }

    /// Ends every live group subscription of a company that is being erased.
    static func endSubscriptions(of company: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE group_requests SET ended_at = now()
            WHERE third_party_id = \(company) AND subscription_days IS NOT NULL AND ended_at IS NULL
            """, logger: logger)
    }

    // MARK: Background refresh of live subscriptions

    /// Takes the group subscription compared longest ago (never, first) whose last comparison is older than
    /// `age`, and marks it compared now, all in one statement: the mark is the claim, so another instance
    /// (`SKIP LOCKED`) takes the next one, and the computation that follows holds no lock. A subscription
    /// that has expired gets this one last refresh and `infinity`, which takes it out of the queue for good.
    static func claimSubscriptionDueForRefresh(checkedBefore age: Duration, on connection: PostgresConnection, logger: Logger) async throws
        -> UUID?
    {
        let seconds = Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
        return try await connection.query(
            """
            UPDATE group_requests SET results_checked_at = CASE WHEN ends_at <= now() THEN 'infinity' ELSE now() END
            WHERE id = (
                SELECT id FROM group_requests
                WHERE status = 'accepted' AND subscription_days IS NOT NULL AND ended_at IS NULL
                  AND (results_checked_at IS NULL OR results_checked_at <= now() - make_interval(secs => \(seconds)))
                ORDER BY results_checked_at NULLS FIRST
                LIMIT 1
                FOR UPDATE SKIP LOCKED
            )
            RETURNING id
            """, logger: logger
        ).collect().first?.decode(UUID.self)
    }

    /// The request, read again and locked until the transaction ends, so its releases are stored one at a
    /// time (a read of the results and the background refresh never both store the same new figures).
    /// `NO KEY UPDATE`: the lock need not block rows that only reference this one.
    static func requestLockedForRelease(_ requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> GroupRequest? {
        try await collect(
            connection.query(
                """
                \(unescaped: selection) FROM group_requests g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
                WHERE g.id = \(requestID) FOR NO KEY UPDATE OF g
                """, logger: logger)
        ).first
    }

    static func markResultsChecked(_ requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE group_requests SET results_checked_at = now() WHERE id = \(requestID)", logger: logger)
    }
}
