import Foundation
import Logging
import PostgresNIO

/// The SQL of group requests: cohort selection on the daily rollups, the requests themselves, and their
/// stored releases (the cells' figures come from `CellAggregateStore` through the privacy module).
public enum GroupRequestStore {
    static let selection = """
        SELECT g.id, g.third_party_id, coalesce(t.company_name, 'Erased company') AS company_name,
               coalesce(t.vat_number, '') AS vat_number, g.types, g.filters::text AS filters, g.age_min,
               g.age_max, g.sex::text AS sex, to_char(g.window_from, 'YYYY-MM-DD') AS window_from,
               to_char(g.window_to, 'YYYY-MM-DD') AS window_to, g.bucket, g.purpose, g.status, g.refusal_reason,
               g.cohort_size, g.created_at, g.subscription_days, g.ends_at, g.ended_at, now() AS now, g.cell_loss_micro,
               to_char(g.released_through, 'YYYY-MM-DD') AS released_through
        """

    static func request(from row: PostgresRow) throws -> GroupRequest {
        let columns = row.makeRandomAccess()
        let filters = try JSONDecoder().decode([GroupRequest.Filter].self, from: Data(try columns["filters"].decode(String.self).utf8))
        let endsAt = try columns["ends_at"].decode(Date?.self), endedAt = try columns["ended_at"].decode(Date?.self)
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
            releasedThrough: try columns["released_through"].decode(String?.self).flatMap(CalendarDate.init(iso:)))
    }

    static func collect(_ rows: PostgresRowSequence) async throws -> [GroupRequest] {
        var requests: [GroupRequest] = []
        for try await row in rows { requests.append(try request(from: row)) }
        return requests
    }

    // MARK: Evaluation

    /// The sorted person numbers of everyone who matches: active people of the demographics whose figure of
    /// each filter's type over the window (mean reading, or mean daily total for a cumulative type: see
    /// `RollupFigureSQL`) lies within its bounds (all filters must hold). People who blocked `company` are
    /// not in its cohorts: a block keeps a person's data from the company, aggregated or not.
    public static func cohort(
        filters: [GroupRequest.Filter], demographics: GroupRequest.Demographics, from: CalendarDate, to: CalendarDate,
        excludingBlocksOf company: UUID?, on connection: PostgresConnection, logger: Logger
    ) async throws -> [Int32] {
        let filterJSON = String(decoding: try JSONEncoder().encode(filters.map(FilterRow.init)), as: UTF8.self)
        let rows = try await connection.query(
            """
            WITH f AS (
                SELECT (x->>'code')::int2 AS type, (x->>'min')::float8 AS min, (x->>'max')::float8 AS max
                FROM jsonb_array_elements(\(filterJSON)::jsonb) x
            ), people AS (
                SELECT u.account_id, u.person_number FROM users u JOIN accounts a ON a.id = u.account_id
                WHERE a.status = 'active'
                  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.user_id = u.account_id AND b.third_party_id = \(company))
                  AND (\(demographics.sex?.rawValue)::text IS NULL OR u.sex = \(demographics.sex?.rawValue)::text)
                  AND (\(demographics.ageMin)::int IS NULL
                       OR u.birth_date <= ((now() AT TIME ZONE 'UTC')::date - make_interval(years => \(demographics.ageMin)::int))::date)
                  AND (\(demographics.ageMax)::int IS NULL
                       OR u.birth_date > ((now() AT TIME ZONE 'UTC')::date - make_interval(years => \(demographics.ageMax)::int + 1))::date)
            ), means AS (
                SELECT r.user_id, r.type, \(unescaped: RollupFigureSQL.bucket("r", types: filters.map(\.type))) AS mean
                FROM daily_rollups r
                WHERE r.type = ANY(\(filters.map(\.type.code))::int2[]) AND r.day BETWEEN \(from.description)::date AND \(to.description)::date
                GROUP BY r.user_id, r.type
            ), matching AS (
                SELECT p.person_number FROM people p
                JOIN means m ON m.user_id = p.account_id
                JOIN f ON f.type = m.type AND m.mean >= coalesce(f.min, '-Infinity') AND m.mean <= coalesce(f.max, 'Infinity')
                GROUP BY p.person_number
                HAVING count(*) = (SELECT count(*) FROM f)
            )
            SELECT coalesce(array_agg(person_number::int4 ORDER BY person_number), '{}') FROM (
                SELECT person_number FROM matching
                UNION ALL
                SELECT person_number FROM people WHERE NOT EXISTS (SELECT 1 FROM f)
            ) cohort
            """, logger: logger)
        return try await rows.collect().first?.decode([Int32].self) ?? []
    }

    private struct FilterRow: Encodable {
        var code: Int16
        var min: Double?
        var max: Double?
        init(_ filter: GroupRequest.Filter) { (code, min, max) = (filter.type.code, filter.min, filter.max) }
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
                                            cell_loss_micro, released_through)
                VALUES (\(thirdPartyID), \(request.types.map(\.code)), \(filters)::jsonb, \(request.demographics.ageMin),
                        \(request.demographics.ageMax), \(request.demographics.sex?.rawValue), \(request.windowFrom.description)::date,
                        \(request.windowTo.description)::date, \(request.bucket.rawValue), \(request.purpose), \(status.rawValue),
                        \(reason?.rawValue), \(cohort)::int4[], \(cohortSize),
                        \(status == .accepted ? request.subscriptionDays : nil),
                        CASE WHEN \(status.rawValue) = 'accepted' AND \(request.subscriptionDays)::int IS NOT NULL
                             THEN now() + make_interval(days => \(request.subscriptionDays)::int) END,
                        \(request.cellLoss.micro), \(releasedThrough?.description)::date)
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
        try await collect(connection.query(
            """
            \(unescaped: selection) FROM group_requests g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
            WHERE g.id = \(id) AND (\(sender)::uuid IS NULL OR g.third_party_id = \(sender))
            """, logger: logger)).first
    }

    static func list(
        sender: UUID?, status: GroupRequest.Status?, after cursor: PageCursor?, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> [GroupRequest] {
        let after = cursor.map { Timestamp.postgresText($0.time) }
        return try await collect(connection.query(
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
        try await collect(connection.query(
            """
            WITH changed AS (
                UPDATE group_requests SET ended_at = now()
                WHERE id = \(id) AND third_party_id = \(sender) AND status = 'accepted' AND subscription_days IS NOT NULL
                  AND ended_at IS NULL AND ends_at > now()
                RETURNING *
            )
            \(unescaped: selection) FROM changed g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
            """, logger: logger)).first
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
            """, logger: logger).collect().first?.decode(UUID.self)
    }

    /// The request, read again and locked until the transaction ends, so its releases are stored one at a
    /// time (a read of the results and the background refresh never both store the same new figures).
    /// `NO KEY UPDATE`: the lock need not block rows that only reference this one.
    static func requestLockedForRelease(_ requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> GroupRequest? {
        try await collect(connection.query(
            """
            \(unescaped: selection) FROM group_requests g LEFT JOIN third_parties t ON t.account_id = g.third_party_id
            WHERE g.id = \(requestID) FOR NO KEY UPDATE OF g
            """, logger: logger)).first
    }

    static func markResultsChecked(_ requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE group_requests SET results_checked_at = now() WHERE id = \(requestID)", logger: logger)
    }

    // MARK: Releases

    /// The frozen cohort of an accepted request, less the members who have blocked its company since: a
    /// subscription's later releases leave them out.
    static func cohort(of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [Int32] {
        try await connection.query(
            """
            SELECT coalesce(array_agg(m.n ORDER BY m.i), '{}')
            FROM group_requests g, unnest(g.cohort) WITH ORDINALITY AS m(n, i)
            WHERE g.id = \(requestID)
              AND NOT EXISTS (
                  SELECT 1 FROM users u JOIN blocks b ON b.user_id = u.account_id
                  WHERE u.person_number = m.n AND b.third_party_id = g.third_party_id)
            """, logger: logger
        ).collect().first?.decode([Int32].self) ?? []
    }

    /// Evaluations and releases sort about a million person-days; in memory that is several times faster
    /// than the default 4 MB spilling to disk. Only for this transaction.
    /// Their statements grow with the population, so they also get the longer statement bound.
    static func allowLargeSorts(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SET LOCAL work_mem = '256MB'", logger: logger)
        try await LongStatements.allow(on: connection, logger: logger)
    }

    /// Stores the cells a release adds; they are never changed afterwards.
    static func storeRelease(_ cells: [GroupResultCell], of requestID: UUID, loss: PrivacyLoss, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        let json = String(decoding: try JSONEncoder().encode(cells), as: UTF8.self)
        try await connection.query(
            "INSERT INTO group_releases (request_id, cells, loss_micro) VALUES (\(requestID), \(json)::jsonb, \(loss.micro))", logger: logger)
    }

    static func setReleasedThrough(_ bucket: CalendarDate, of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "UPDATE group_requests SET released_through = \(bucket.description)::date WHERE id = \(requestID)", logger: logger)
    }

    /// Every cell released so far, by bucket and type, as of the latest release; nil before the first.
    /// Releases from before differential privacy were whole snapshots (`snapshot`): the latest of them is
    /// the base, and later releases only add cells.
    static func releasedCells(of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> GroupRelease? {
        let rows = try await connection.query(
            "SELECT released_at, snapshot, cells::text FROM group_releases WHERE request_id = \(requestID) ORDER BY id", logger: logger)
        var latest: Date?
        var cells: [String: GroupResultCell] = [:]
        for try await (at, snapshot, json) in rows.decode((Date, Bool, String).self) {
            latest = at
            if snapshot { cells = [:] }
            for cell in try JSONDecoder().decode([GroupResultCell].self, from: Data(json.utf8)) {
                cells["\(cell.bucketStart) \(cell.type.code)"] = cells["\(cell.bucketStart) \(cell.type.code)"] ?? cell
            }
        }
        guard let latest else { return nil }
        return GroupRelease(releasedAt: latest, cells: cells.values.sorted { ($0.bucketStart, $0.type.code) < ($1.bucketStart, $1.type.code) })
    }

    /// Tells each member whose data went into a release that it contributed to an anonymised aggregate:
    /// once a UTC day per request, however many releases that day (releases are serialised by the ledger
    /// lock, so two cannot both find the day's entry missing).
    static func recordContributions(of request: GroupRequest, members: [Int32], on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            """
            INSERT INTO access_log (user_id, third_party_id, company_name, request_id, kind, types, samples)
            SELECT u.account_id, \(request.thirdParty.id), \(request.thirdParty.companyName), \(request.id), 'group',
                   \(request.types.map(\.code))::int2[], NULL
            FROM unnest(\(members)::int4[]) AS n(person_number)
            JOIN users u ON u.person_number = n.person_number
            WHERE NOT EXISTS (
                  SELECT 1 FROM access_log a
                  WHERE a.user_id = u.account_id AND a.request_id = \(request.id) AND a.kind = 'group'
                    AND a.at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
            """, logger: logger)
    }
}
