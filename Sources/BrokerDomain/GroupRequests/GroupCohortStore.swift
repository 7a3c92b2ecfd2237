import Foundation
import Logging
import PostgresNIO

/// The SQL of group cohorts: who matches a request when it is evaluated (on the daily rollups), and who of
/// that frozen cohort still counts at a later release.
package enum GroupCohortStore {
    /// The sorted person numbers of everyone who matches: active people of the demographics whose figure of
    /// each filter's type over the window (mean reading, or mean daily total for a cumulative type: see
    /// `RollupFigureSQL`) lies within its bounds (all filters must hold). People who blocked `company` are
    /// not in its cohorts: a block keeps a person's data from the company, aggregated or not. A type a
    /// person does not share (`unshared_types`) counts as no data of it: a filter on it never selects them.
    package static func cohort(
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
                -- An unshared type is left out per person and type, after the means (a few thousand probes of
                -- unshared_types rather than one per rollup row): all of a person's rows of it, as before.
                SELECT p.person_number FROM people p
                JOIN means m ON m.user_id = p.account_id
                JOIN f ON f.type = m.type AND m.mean >= coalesce(f.min, '-Infinity') AND m.mean <= coalesce(f.max, 'Infinity')
                WHERE NOT EXISTS (SELECT 1 FROM unshared_types x WHERE x.user_id = m.user_id AND x.type = m.type)
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
    package static func allowLargeSorts(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SET LOCAL work_mem = '256MB'", logger: logger)
        try await LongStatements.allow(on: connection, logger: logger)
    }
}
