import BrokerTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer
@testable import BrokerTooling

@Suite("SyntheticPopulation")
struct SyntheticPopulationTests {
    /// A fixed window, so runs on different days give the same data.
    static let endDay = CalendarDate(year: 2026, month: 3, day: 4)!

    static func population(people: Int = 50, days: Int = 7, seed: UInt64 = 7, batch: Int? = nil) -> SyntheticPopulation {
        SyntheticPopulation(people: people, days: days, seed: seed, endDay: endDay, peoplePerBatch: batch)
    }

    /// Seeds `population` into a fresh database and runs `body` on it.
    static func withPopulation<T: Sendable>(
        _ population: SyntheticPopulation, _ body: @escaping @Sendable (DatabasePool, SyntheticPopulation.Summary) async throws -> T
    ) async throws -> T {
        try await TestDatabase.withMigratedDatabase { url in
            try await TestDatabase.withClient(url) { client in
                let summary = try await population.write(client: client, logger: TestDatabase.logger)
                return try await body(client, summary)
            }
        }
    }

    /// Everything a population wrote, reduced to comparable digests.
    struct Fingerprint: Equatable {
        var samples: Int64
        /// Rounded: a float sum depends on the order PostgreSQL scans the rows in (the digests cover exact values).
        var sum: Double
        var samplesDigest: String
        var peopleDigest: String
        var rollupsDigest: String
    }

    static func fingerprint(_ client: DatabasePool) async throws -> Fingerprint {
        let samples = try await client.query(
            """
            SELECT count(*), coalesce(round(sum(value)::numeric, 6)::float8, 0),
                   coalesce(md5(string_agg(concat_ws(' ', user_id, type, at, value, arrival), ',' ORDER BY user_id, type, at)), '')
            FROM samples
            """, logger: TestDatabase.logger)
        let (count, sum, samplesDigest) = try #require(try await samples.collect().first?.decode((Int64, Double, String).self))
        let people = try await client.query(
            """
            SELECT coalesce(md5(string_agg(concat_ws(' ', a.id, a.email, a.status, u.fiscal_code, u.full_name, u.birth_date, u.sex),
                                           ',' ORDER BY a.id)), '')
            FROM accounts a JOIN users u ON u.account_id = a.id
            """, logger: TestDatabase.logger)
        let rollups = try await client.query(
            """
            SELECT coalesce(md5(string_agg(concat_ws(' ', user_id, type, day, count, sum, sum_squares, min, max),
                                           ',' ORDER BY user_id, type, day)), '')
            FROM daily_rollups
            """, logger: TestDatabase.logger)
        return Fingerprint(
            samples: count, sum: sum, samplesDigest: samplesDigest,
            peopleDigest: try #require(try await people.collect().first?.decode(String.self)),
            rollupsDigest: try #require(try await rollups.collect().first?.decode(String.self)))
    }

    static func count(_ client: DatabasePool, _ query: PostgresQuery) async throws -> Int64 {
        let rows = try await client.query(query, logger: TestDatabase.logger)
        return try #require(try await rows.collect().first?.decode(Int64.self))
    }

    // MARK: - Determinism

    @Test("the same seed gives the same people and samples, however the run is batched or split; another seed differs")
    func deterministic() async throws {
        let whole = try await Self.withPopulation(Self.population(batch: 7)) { client, summary in
            #expect(summary.written == 50 && summary.alreadyPresent == 0)
            #expect(summary.samples > 50 * 7 * 20)
            return try await Self.fingerprint(client)
        }
        // A first run of 20 people, completed to 50 by a second run with other batches.
        let split = try await TestDatabase.withMigratedDatabase { url in
            try await TestDatabase.withClient(url) { client in
                _ = try await Self.population(people: 20, batch: 50).write(client: client, logger: TestDatabase.logger)
                let rest = try await Self.population().write(client: client, logger: TestDatabase.logger)
                #expect(rest.alreadyPresent == 20 && rest.written == 30)
                return try await Self.fingerprint(client)
            }
        }
        #expect(split == whole)

        let other = try await Self.withPopulation(Self.population(seed: 8)) { client, _ in try await Self.fingerprint(client) }
        #expect(other.samplesDigest != whole.samplesDigest)
        #expect(other.peopleDigest != whole.peopleDigest)
        #expect(other.sum != whole.sum)
    }

    @Test("running again writes nothing; --replace deletes the population and writes the same one afresh")
    func idempotent() async throws {
        try await Self.withPopulation(Self.population()) { client, first in
            let before = try await Self.fingerprint(client)
            let again = try await Self.population().write(client: client, logger: TestDatabase.logger)
            #expect(again.written == 0 && again.alreadyPresent == 50 && again.samples == 0)
            #expect(try await Self.fingerprint(client) == before)

            #expect(try await Self.population().delete(client: client, logger: TestDatabase.logger) == 50)
            #expect(try await Self.count(client, "SELECT count(*) FROM samples") == 0)
            #expect(try await Self.count(client, "SELECT count(*) FROM daily_rollups") == 0)
            let rewritten = try await Self.population().write(client: client, logger: TestDatabase.logger)
            #expect(rewritten.written == 50 && rewritten.samples == first.samples)
            #expect(try await Self.fingerprint(client) == before)
        }
    }

    // MARK: - Consistency with the schema's invariants

    @Test("every type is present and every value lies in its type's accepted range")
    func valuesInRange() async throws {
        try await Self.withPopulation(Self.population()) { client, _ in
            let rows = try await client.query(
                "SELECT type, min(value), max(value) FROM samples GROUP BY type ORDER BY type", logger: TestDatabase.logger)
            var seen: Set<SampleType> = []
            for try await (code, minimum, maximum) in rows.decode((Int16, Double, Double).self) {
                let type = try #require(SampleType(code: code), "unknown type code \(code)")
                seen.insert(type)
                #expect(type.range.contains(minimum) && type.range.contains(maximum), "\(type): \(minimum)…\(maximum)")
            }
            // The population writes the eleven types of its model (SyntheticSamples); the vitals added later
            // (temperature, glucose …) come only from uploads and imports.
            #expect(seen == Set(SampleType.allCases.filter { $0.code <= 11 }))
        }
    }

    @Test("the daily rollups are exactly the per-person, per-type, per-UTC-day aggregates of the samples")
    func rollupsAgree() async throws {
        try await Self.withPopulation(Self.population()) { client, summary in
            #expect(try await Self.count(client, "SELECT count(*) FROM daily_rollups") == Int64(summary.rollups))
            let disagreements = try await Self.count(
                client,
                """
                SELECT count(*)
                FROM (SELECT user_id, type, sample_day(type, at, value, NULL) AS day, count(*) AS count, sum(value) AS sum,
                             sum(value * value) AS sum_squares, min(value) AS min, max(value) AS max
                      FROM samples GROUP BY 1, 2, 3) s
                FULL JOIN daily_rollups r USING (user_id, type, day)
                WHERE s.count IS NULL OR r.count IS NULL OR s.count <> r.count
                   OR abs(s.sum - r.sum) > 1e-9 * greatest(1, abs(s.sum))
                   OR abs(s.sum_squares - r.sum_squares) > 1e-9 * greatest(1, abs(s.sum_squares))
                   OR s.min <> r.min OR s.max <> r.max
                """)
            #expect(disagreements == 0)
        }
    }

    @Test("each person's arrivals run 1…n without duplicates, and sample_arrivals holds n")
    func arrivals() async throws {
        try await Self.withPopulation(Self.population()) { client, _ in
            let wrong = try await Self.count(
                client,
                """
                SELECT count(*)
                FROM users u
                LEFT JOIN sample_arrivals a ON a.user_id = u.account_id
                LEFT JOIN (SELECT user_id, count(*) AS n, count(DISTINCT arrival) AS distinct_arrivals,
                                  min(arrival) AS first, max(arrival) AS last
                           FROM samples GROUP BY user_id) s ON s.user_id = u.account_id
                WHERE a.user_id IS NULL
                   OR a.last_arrival <> coalesce(s.n, 0)
                   OR (s.n IS NOT NULL AND (s.distinct_arrivals <> s.n OR s.first <> 1 OR s.last <> s.n))
                """)
            #expect(wrong == 0)
            #expect(try await Self.count(client, "SELECT count(*) FROM sample_arrivals") == 50)
        }
    }

    @Test("fiscal codes are valid, distinct, and agree with birth date and sex")
    func fiscalCodes() async throws {
        try await Self.withPopulation(Self.population()) { client, _ in
            let rows = try await client.query(
                "SELECT fiscal_code, birth_date::text, sex FROM users", logger: TestDatabase.logger)
            var codes: Set<String> = []
            for try await (text, birth, sexCode) in rows.decode((String, String, String).self) {
                let code = try FiscalCode.parse(text).get()
                let sex = try #require(Sex(rawValue: sexCode))
                #expect(code.mismatches(birthDate: try #require(CalendarDate(iso: birth)), sex: sex).isEmpty, "\(text)")
                codes.insert(code.value)
            }
            #expect(codes.count == 50)
        }
    }

    @Test("synthetic people are active users with no password: logging in as one fails")
    func cannotLogIn() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let population = Self.population(people: 5, days: 2)
            try await TestDatabase.withClient(url) { client in
                _ = try await population.write(client: client, logger: TestDatabase.logger)
                let usable = try await Self.count(
                    client,
                    """
                    SELECT count(*) FROM accounts
                    WHERE email LIKE 'synthetic-%' AND (password_hash IS NOT NULL OR role <> 'user' OR status <> 'active')
                    """)
                #expect(usable == 0)
                #expect(try await Self.count(client, "SELECT count(*) FROM accounts") == 5)
            }
            try await TestHarness.run(databaseURL: url) { harness in
                for password in ["", "password", "synthetic"] {
                    let response = try await harness.request(
                        .post, "/v1/sessions",
                        json: #"{"email":"\#(population.email(ofPerson: 0))","password":"\#(password)"}"#)
                    #expect(response.status == .unauthorized)
                }
            }
        }
    }

    // MARK: - Believability

    @Test("blood pressure rises with age, heart rate is lower at night, and a few percent of person-days are gaps")
    func believable() async throws {
        try await Self.withPopulation(Self.population(people: 200, days: 14)) { client, _ in
            let rows = try await client.query(
                """
                SELECT
                    (SELECT avg(s.value) FROM samples s JOIN users u ON u.account_id = s.user_id
                     WHERE s.type = 2 AND u.birth_date <= DATE '2026-03-04' - interval '60 years'),
                    (SELECT avg(s.value) FROM samples s JOIN users u ON u.account_id = s.user_id
                     WHERE s.type = 2 AND u.birth_date > DATE '2026-03-04' - interval '40 years'),
                    (SELECT avg(value) FROM samples WHERE type = 1 AND extract(hour FROM at AT TIME ZONE 'UTC') BETWEEN 1 AND 4),
                    (SELECT avg(value) FROM samples WHERE type = 1 AND extract(hour FROM at AT TIME ZONE 'UTC') BETWEEN 13 AND 16),
                    (SELECT count(DISTINCT (user_id, (at AT TIME ZONE 'UTC')::date))::float8 / (200 * 14) FROM samples)
                """, logger: TestDatabase.logger)
            let (olderSystolic, youngerSystolic, night, afternoon, daysWithData) = try #require(
                try await rows.collect().first?.decode((Double, Double, Double, Double, Double).self))
            #expect(olderSystolic - youngerSystolic > 10)
            #expect(afternoon - night > 8)
            #expect(daysWithData < 0.995 && daysWithData > 0.9)
        }
    }

    @Test("people are adults of 18–90 of both sexes in about equal numbers, with distinct ids, emails and fiscal codes")
    func demographics() throws {
        let lastDay = Self.endDay.dayNumber
        let people = (0..<20_000).map { SyntheticPerson(seed: 3, number: $0, lastDay: lastDay) }
        #expect(people.allSatisfy { (18...90).contains($0.age) })
        #expect(Set(people.map(\.id)).count == people.count)
        #expect(Set(people.map(\.email)).count == people.count)
        #expect(Set(people.map(\.fiscalCode)).count == people.count)
        let women = people.filter { $0.sex == .female }.count
        #expect(abs(women - 10_000) < 400)
        // Every decade of adult life is represented, the eighties less than the forties.
        let byDecade = Dictionary(grouping: people, by: { $0.age / 10 }).mapValues(\.count)
        #expect((2...8).allSatisfy { (byDecade[$0] ?? 0) > 500 })
        #expect(byDecade[8]! < byDecade[4]!)
        for person in people.prefix(500) {
            let code = try FiscalCode.parse(person.fiscalCode).get()
            #expect(code.mismatches(birthDate: person.birthDate, sex: person.sex).isEmpty)
        }
    }

    @Test("day numbers round-trip through calendar dates, leap days included")
    func dayNumbers() {
        #expect(CalendarDate(year: 1970, month: 1, day: 1)!.dayNumber == 0)
        #expect(CalendarDate(year: 2000, month: 3, day: 1)!.dayNumber == 11_017)
        #expect(CalendarDate(dayNumber: -1) == CalendarDate(year: 1969, month: 12, day: 31))
        for dayNumber in stride(from: -30_000, through: 30_000, by: 7) {
            #expect(CalendarDate(dayNumber: dayNumber)?.dayNumber == dayNumber)
        }
        #expect(CalendarDate.weekday(ofDayNumber: CalendarDate(year: 2026, month: 3, day: 2)!.dayNumber) == 0)  // a Monday
    }
}
