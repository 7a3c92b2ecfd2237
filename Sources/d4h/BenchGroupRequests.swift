import ArgumentParser
import Broker
import Foundation
import Logging
import PostgresNIO

extension Bench {
    struct GroupRequestEvaluation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "group-requests",
            abstract: "Group request evaluation on the rollups against the naive SQL over raw samples, and the similarity check's cost.")

        @Option(help: "The database with a seeded population (`d4h seed --people 10000 --days 90`).") var databaseURL: String
        @Option(help: "Timed evaluations.") var runs = 20
        @Option(help: "Timed runs of the naive query (it is slow).") var naiveRuns = 3
        @Option(help: "GROUP_MIN_COHORT.") var k = 1000

        func run() async throws {
            let logger = makeLogger(level: .warning)
            try await withDatabase(url: databaseURL, logger: logger) { client in
                let company = try await client.query(
                    """
                    WITH a AS (INSERT INTO accounts (role, email, status) VALUES ('third_party', \("group-bench-\(UUID())@bench.data4help.example"), 'active') RETURNING id)
                    INSERT INTO third_parties (account_id, vat_number, company_name) SELECT id, \("GB" + UUID().uuidString.prefix(9)), 'Group Bench' FROM a
                    RETURNING account_id
                    """, logger: logger).collect().first!.decode(UUID.self)
                let principal = Principal(accountID: company, role: .thirdParty, credential: .apiKey(id: UUID()))
                var privacy = PrivacySettings()
                // Budgets large enough for every timed run: the bench measures time, not the ledger's refusals.
                (privacy.companyBudget, privacy.personBudget) = (100, 100)
                let service = GroupRequestService(
                    client: client, minimumCohort: k, evaluations: EvaluationSlots(slots: 2, timeout: .seconds(600)), privacy: privacy)
                let last = CalendarDate.today.adding(days: -1), first = last.adding(days: -89)
                let creation = GroupRequestService.Creation(
                    types: ["heart_rate", "systolic_pressure"],
                    filters: [.init(type: "heart_rate", min: 60, max: 85), .init(type: "systolic_pressure", min: 100, max: 135)],
                    ageMin: nil, ageMax: nil, sex: nil, windowFrom: first.description, windowTo: last.description, bucket: "day",
                    purpose: "Benchmark", subscriptionDays: nil)

                // Evaluation through the service, as POST /v1/group-requests runs it: cohort, count gate,
                // similarity check, insert, first release (results, access-log entries, audit events).
                var evaluations: [Double] = []
                var accepted: GroupRequest?
                for index in 0..<(runs + 1) {
                    let start = ContinuousClock.now
                    let request = try await service.create(creation, by: principal, logger: logger)
                    if index > 0 { evaluations.append(milliseconds(ContinuousClock.now - start)) }
                    accepted = request
                }
                guard let accepted, accepted.status == .accepted, let size = accepted.cohortSize else {
                    throw ValidationError("the typical request was refused: seed a population first (d4h seed --people 10000 --days 90)")
                }
                let released = try await service.results(id: accepted.id, for: principal, logger: logger).cells

                // The naive query a prototype would run: the same answer from raw samples, no rollups.
                var naiveTimes: [Double] = []
                var naiveCells: [GroupResultCell] = []
                for _ in 0..<naiveRuns {
                    let start = ContinuousClock.now
                    naiveCells = try await naive(client: client, first: first, last: last, logger: logger)
                    naiveTimes.append(milliseconds(ContinuousClock.now - start))
                }
                let difference = maximumRelativeDifference(released, naiveCells)

                let evaluation = percentile(evaluations, 0.5), naiveP50 = percentile(naiveTimes, 0.5)
                print("## Group request evaluation (\(try await population(client, logger)); cohort \(size) people, k = \(k))")
                print("Typical request: heart rate and systolic pressure, mean heart rate 60–85 and systolic 100–135 over 90 days, daily buckets (\(released.count) cells).")
                print("| evaluation | p50 ms | min ms | max ms | ratio to naive |")
                print("|---|---:|---:|---:|---:|")
                print("| POST /v1/group-requests path on the rollups (cohort, gate, similarity, release; \(runs) runs) | \(format(evaluation)) | \(format(evaluations.min()!)) | \(format(evaluations.max()!)) | \(String(format: "%.1f", naiveP50 / evaluation))× faster |")
                print("| naive SQL over raw samples, same answer (\(naiveRuns) runs) | \(format(naiveP50)) | \(format(naiveTimes.min()!)) | \(format(naiveTimes.max()!)) | 1.0 |")
                print("Figures identical: \(naiveCells.count == released.count ? "same \(released.count) cells" : "CELL COUNTS DIFFER (\(naiveCells.count) vs \(released.count))"), largest relative difference \(String(format: "%.1e", difference)).")
                try await client.query("DELETE FROM accounts WHERE id = \(company)", logger: logger)
            }
        }

        func naive(client: DatabasePool, first: CalendarDate, last: CalendarDate, logger: Logger) async throws -> [GroupResultCell] {
            let from = first.description + "T00:00:00Z", to = last.adding(days: 1).description + "T00:00:00Z"
            let rows = try await client.query(
                """
                WITH means AS (
                    SELECT s.user_id, s.type, avg(s.value) AS mean FROM samples s
                    WHERE s.type IN (1, 2) AND s.at >= \(from)::timestamptz AND s.at < \(to)::timestamptz
                    GROUP BY s.user_id, s.type
                ), cohort AS (
                    SELECT m.user_id FROM means m
                    JOIN users u ON u.account_id = m.user_id JOIN accounts a ON a.id = u.account_id AND a.status = 'active'
                    WHERE (m.type = 1 AND m.mean BETWEEN 60 AND 85) OR (m.type = 2 AND m.mean BETWEEN 100 AND 135)
                    GROUP BY m.user_id HAVING count(*) = 2
                ), per_person AS (
                    SELECT s.type, (s.at AT TIME ZONE 'UTC')::date AS start, s.user_id, avg(s.value) AS mean
                    FROM samples s JOIN cohort c ON c.user_id = s.user_id
                    WHERE s.type IN (1, 2) AND s.at >= \(from)::timestamptz AND s.at < \(to)::timestamptz
                    GROUP BY 1, 2, 3
                )
                SELECT type, to_char(start, 'YYYY-MM-DD'), count(*)::int8, avg(mean),
                       percentile_cont(0.1) WITHIN GROUP (ORDER BY mean), percentile_cont(0.5) WITHIN GROUP (ORDER BY mean),
                       percentile_cont(0.9) WITHIN GROUP (ORDER BY mean)
                FROM per_person GROUP BY type, start ORDER BY start, type
                """, logger: logger)
            var cells: [GroupResultCell] = []
            for try await (code, start, people, mean, p10, p50, p90) in rows.decode((Int16, String, Int64, Double, Double, Double, Double).self) {
                let released = people >= k
                cells.append(GroupResultCell(
                    bucketStart: start, type: SampleType(code: code)!, people: released ? Int(people) : nil, mean: released ? mean : nil,
                    p10: released ? p10 : nil, p50: released ? p50 : nil, p90: released ? p90 : nil, suppressed: !released))
            }
            return cells
        }

        func maximumRelativeDifference(_ a: [GroupResultCell], _ b: [GroupResultCell]) -> Double {
            var worst = 0.0
            for (x, y) in zip(a, b) {
                guard x.bucketStart == y.bucketStart, x.type == y.type, x.people == y.people, x.suppressed == y.suppressed else { return .infinity }
                for (u, v) in [(x.mean, y.mean), (x.p10, y.p10), (x.p50, y.p50), (x.p90, y.p90)] {
                    guard let u, let v else { if (u == nil) != (v == nil) { return .infinity }; continue }
                    worst = max(worst, abs(u - v) / max(abs(u), abs(v), 1e-12))
                }
            }
            return worst
        }

        func population(_ client: DatabasePool, _ logger: Logger) async throws -> String {
            let (people, days) = try await client.query(
                "SELECT (SELECT count(*) FROM users), (SELECT count(DISTINCT day) FROM daily_rollups WHERE type = 1)", logger: logger
            ).collect().first!.decode((Int64, Int64).self)
            return "\(people) people, \(days) days of data"
        }

        func milliseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }

        func percentile(_ values: [Double], _ fraction: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction + 0.5))]
        }

        func format(_ value: Double) -> String { String(format: "%.1f", value) }
    }
}
