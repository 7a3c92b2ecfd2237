import Foundation
import Logging
import PostgresNIO

/// The SQL of group requests: cohort selection on the daily rollups, the similarity check against earlier
/// released cohorts, the per-bucket distribution across people, and the stored releases.
public enum GroupRequestStore {
    static let selection = """
        SELECT g.id, g.third_party_id, t.company_name, t.vat_number, g.types, g.filters::text AS filters, g.age_min,
               g.age_max, g.sex::text AS sex, to_char(g.window_from, 'YYYY-MM-DD') AS window_from,
               to_char(g.window_to, 'YYYY-MM-DD') AS window_to, g.bucket, g.purpose, g.status, g.refusal_reason,
               g.cohort_size, g.created_at, g.subscription_days, g.ends_at, g.ended_at, now() AS now
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
            })
    }

    static func collect(_ rows: PostgresRowSequence) async throws -> [GroupRequest] {
        var requests: [GroupRequest] = []
        for try await row in rows { requests.append(try request(from: row)) }
        return requests
    }

    // MARK: Evaluation

    /// The sorted person numbers of everyone who matches: active people of the demographics whose figure of
    /// each filter's type over the window (mean reading, or mean daily total for a cumulative type: see
    /// `RollupFigureSQL`) lies within its bounds (all filters must hold).
    public static func cohort(
        filters: [GroupRequest.Filter], demographics: GroupRequest.Demographics, from: CalendarDate, to: CalendarDate,
        on connection: PostgresConnection, logger: Logger
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

    /// True when some earlier released cohort differs from `cohort` by at least 1 and fewer than `k` people:
    /// releasing both would let their difference be read off. Only cohorts whose size is within k are
    /// compared (a larger size gap is already a difference of k or more); the difference is the popcount
    /// of the XOR of the two bitmaps, the shorter one padded with zeros.
    public static func isTooSimilar(_ cohort: [Int32], k: Int, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let size = cohort.count
        let bits = bitmap(cohort)
        return try await connection.query(
            """
            SELECT EXISTS (
                SELECT 1 FROM group_requests g
                WHERE g.status = 'accepted' AND g.cohort_size BETWEEN \(size - k + 1) AND \(size + k - 1)
                  AND bit_count(
                      CASE WHEN length(g.cohort_bits) >= length(\(bits)::varbit)
                           THEN g.cohort_bits # (\(bits)::varbit || repeat('0', length(g.cohort_bits) - length(\(bits)::varbit))::varbit)
                           ELSE (g.cohort_bits || repeat('0', length(\(bits)::varbit) - length(g.cohort_bits))::varbit) # \(bits)::varbit
                      END) BETWEEN 1 AND \(k - 1))
            """, logger: logger
        ).collect().first?.decode(Bool.self) ?? false
    }

    /// The cohort as `bit varying` text: bit n-1 is person n, padded to a whole byte.
    static func bitmap(_ cohort: [Int32]) -> String {
        let length = ((Int(cohort.max() ?? 0) + 7) / 8) * 8
        var bits = [UInt8](repeating: UInt8(ascii: "0"), count: length)
        for person in cohort where person > 0 { bits[Int(person) - 1] = UInt8(ascii: "1") }
        return String(decoding: bits, as: UTF8.self)
    }

    /// One release decision at a time: two side by side would each miss the other's cohort. Bounded by the
    /// session's `lock_timeout` (55P03, a 503). The row is read so that a time-out is thrown here: an
    /// unread result would leave it for the next statement to meet as "transaction aborted".
    static func lockEvaluation(on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("SELECT pg_advisory_xact_lock(hashtext('data4help.group_request_evaluation'))", logger: logger)
            .collect()
    }

    static func insert(
        _ request: GroupRequestService.ValidCreation, thirdPartyID: UUID, status: GroupRequest.Status,
        reason: GroupRequest.RefusalReason?, cohort: [Int32]?, on connection: PostgresConnection, logger: Logger
    ) async throws -> GroupRequest {
        let filters = String(decoding: try JSONEncoder().encode(request.filters), as: UTF8.self)
        let rows = try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO group_requests (third_party_id, types, filters, age_min, age_max, sex, window_from, window_to, bucket,
                                            purpose, status, refusal_reason, cohort, cohort_size, cohort_bits, subscription_days, ends_at)
                VALUES (\(thirdPartyID), \(request.types.map(\.code)), \(filters)::jsonb, \(request.demographics.ageMin),
                        \(request.demographics.ageMax), \(request.demographics.sex?.rawValue), \(request.windowFrom.description)::date,
                        \(request.windowTo.description)::date, \(request.bucket.rawValue), \(request.purpose), \(status.rawValue),
                        \(reason?.rawValue), \(cohort)::int4[], \(cohort?.count), \(cohort.map(bitmap))::varbit,
                        \(status == .accepted ? request.subscriptionDays : nil),
                        CASE WHEN \(status.rawValue) = 'accepted' AND \(request.subscriptionDays)::int IS NOT NULL
                             THEN now() + make_interval(days => \(request.subscriptionDays)::int) END)
                RETURNING *
            )
            \(unescaped: selection) FROM inserted g JOIN third_parties t ON t.account_id = g.third_party_id
            """, logger: logger)
        guard let request = try await collect(rows).first else { throw GroupRequestError.notFound }
        return request
    }

    // MARK: Reads

    /// One request; `sender` nil for auditors (who see every request).
    static func request(id: UUID, sender: UUID?, on connection: PostgresConnection, logger: Logger) async throws -> GroupRequest? {
        try await collect(connection.query(
            """
            \(unescaped: selection) FROM group_requests g JOIN third_parties t ON t.account_id = g.third_party_id
            WHERE g.id = \(id) AND (\(sender)::uuid IS NULL OR g.third_party_id = \(sender))
            """, logger: logger)).first
    }

    static func list(
        sender: UUID?, status: GroupRequest.Status?, after cursor: PageCursor?, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> [GroupRequest] {
        let after = cursor.map { Timestamp.postgresText($0.time) }
        return try await collect(connection.query(
            """
            \(unescaped: selection) FROM group_requests g JOIN third_parties t ON t.account_id = g.third_party_id
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
            \(unescaped: selection) FROM changed g JOIN third_parties t ON t.account_id = g.third_party_id
            """, logger: logger)).first
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
            \(unescaped: selection) FROM group_requests g JOIN third_parties t ON t.account_id = g.third_party_id
            WHERE g.id = \(requestID) FOR NO KEY UPDATE OF g
            """, logger: logger)).first
    }

    static func markResultsChecked(_ requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE group_requests SET results_checked_at = now() WHERE id = \(requestID)", logger: logger)
    }

    // MARK: Results

    /// Per bucket and type: how many of the cohort's (remaining) people contributed, and the mean and
    /// percentiles of their own figures for the bucket (`RollupFigureSQL`: for steps, each person's daily
    /// total). Cells under `k` people come back suppressed, figures null. Buckets are each person's local
    /// days, as their rollups are. A day bucket is one rollup row per person already; weeks and months first
    /// combine each person's days.
    static func results(
        cohort: [Int32], types: [SampleType], bucket: Statistics.Bucket, from: CalendarDate, to: CalendarDate, k: Int,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> [GroupResultCell] {
        let perPerson = bucket == .day
            ? "SELECT r.type, r.day AS start, \(RollupFigureSQL.day("r", types: types)) AS mean"
            : "SELECT r.type, date_trunc('\(bucket.rawValue)', r.day::timestamp)::date AS start, \(RollupFigureSQL.bucket("r", types: types)) AS mean"
        let grouping = bucket == .day ? "" : "GROUP BY r.type, 2, r.user_id"
        let codes = types.map(\.code)
        let rows = try await connection.query(
            """
            WITH per_person AS (
                \(unescaped: perPerson)
                FROM daily_rollups r
                WHERE r.type = ANY(\(codes)::int2[]) AND r.day BETWEEN \(from.description)::date AND \(to.description)::date
                  AND r.user_id IN (SELECT u.account_id FROM users u WHERE u.person_number = ANY(\(cohort)::int4[]))
                \(unescaped: grouping)
            ), figures AS (
                SELECT type, start, count(*)::int8 AS people, avg(mean) AS mean,
                       percentile_cont('{0.1,0.5,0.9}'::float8[]) WITHIN GROUP (ORDER BY mean) AS percentiles
                FROM per_person GROUP BY type, start
            ), buckets AS (
                -- Every bucket of the range for every type: a bucket nobody contributed to is a suppressed cell
                -- like any other under k, so the release never tells "no one" from "a few".
                SELECT b::date AS start, t.type
                FROM generate_series(date_trunc('\(unescaped: bucket.rawValue)', \(from.description)::timestamp),
                                     \(to.description)::timestamp, interval '1 \(unescaped: bucket.rawValue)') AS b,
                     unnest(\(codes)::int2[]) AS t(type)
            )
            SELECT b.type, to_char(b.start, 'YYYY-MM-DD'), coalesce(f.people, 0), f.mean, f.percentiles
            FROM buckets b LEFT JOIN figures f ON f.type = b.type AND f.start = b.start
            ORDER BY b.start, b.type
            """, logger: logger)
        var cells: [GroupResultCell] = []
        for try await (code, start, people, mean, percentiles) in rows.decode((Int16, String, Int64, Double?, [Double]?).self) {
            guard let type = SampleType(code: code) else { continue }
            // The figures of a small cell never leave this function.
            if people >= k, let mean, let percentiles, percentiles.count == 3 {
                cells.append(GroupResultCell(bucketStart: start, type: type, people: Int(people), mean: mean, p10: percentiles[0],
                                             p50: percentiles[1], p90: percentiles[2], suppressed: false))
            } else {
                cells.append(GroupResultCell(bucketStart: start, type: type, people: nil, mean: nil, p10: nil, p50: nil, p90: nil, suppressed: true))
            }
        }
        return cells
    }

    /// The frozen cohort of an accepted request.
    static func cohort(of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [Int32] {
        try await connection.query("SELECT coalesce(cohort, '{}') FROM group_requests WHERE id = \(requestID)", logger: logger)
            .collect().first?.decode([Int32].self) ?? []
    }

    /// Evaluations and releases sort about a million person-days; in memory that is several times faster
    /// than the default 4 MB spilling to disk. Only for this transaction.
    /// Their statements grow with the population, so they also get the longer statement bound.
    static func allowLargeSorts(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SET LOCAL work_mem = '256MB'", logger: logger)
        try await LongStatements.allow(on: connection, logger: logger)
    }

    static func storeRelease(_ cells: [GroupResultCell], of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> GroupRelease {
        let json = String(decoding: try JSONEncoder().encode(cells), as: UTF8.self)
        let at = try await connection.query(
            "INSERT INTO group_releases (request_id, cells) VALUES (\(requestID), \(json)::jsonb) RETURNING released_at", logger: logger
        ).collect().first?.decode(Date.self) ?? Date()
        return GroupRelease(releasedAt: at, cells: cells)
    }

    static func latestRelease(of requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> GroupRelease? {
        guard let row = try await connection.query(
            "SELECT released_at, cells::text FROM group_releases WHERE request_id = \(requestID) ORDER BY id DESC LIMIT 1", logger: logger
        ).collect().first else { return nil }
        let (at, cells) = try row.decode((Date, String).self)
        return GroupRelease(releasedAt: at, cells: try JSONDecoder().decode([GroupResultCell].self, from: Data(cells.utf8)))
    }

    /// Tells each of the cohort's remaining people that their data contributed to an anonymised aggregate:
    /// once a UTC day per request, however often a subscription's figures change that day (the releases
    /// are serialised by the request's row lock, so two cannot both find the day's entry missing).
    static func recordContributions(of request: GroupRequest, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO access_log (user_id, third_party_id, company_name, request_id, kind, types, samples)
            SELECT u.account_id, \(request.thirdParty.id), \(request.thirdParty.companyName), \(request.id), 'group',
                   \(request.types.map(\.code))::int2[], NULL
            FROM group_requests g, unnest(g.cohort) AS n(person_number)
            JOIN users u ON u.person_number = n.person_number
            WHERE g.id = \(request.id)
              AND NOT EXISTS (
                  SELECT 1 FROM access_log a
                  WHERE a.user_id = u.account_id AND a.request_id = g.id AND a.kind = 'group'
                    AND a.at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
            """, logger: logger)
    }
}
