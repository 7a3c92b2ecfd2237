import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging
import PostgresNIO

extension Bench {
    struct GroupReadmeRequest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "group-readme",
            abstract: "The README's group request, many times through the service: is every released mean within 2 % of the exact mean?",
            discussion: """
                On a database seeded as `make run` seeds its own (`d4h seed --people 20000 --days 7`, data to yesterday), \
                sends the README's request — heart rate of women 30–49 whose mean heart rate is 50–90, the 7 days to \
                yesterday, day buckets — --runs times through `GroupRequestService.create` with `SecureNoise` and the \
                default settings (k, ρ per cell, contribution bounds), only the budgets raised so that every run is paid \
                for (budgets never change the noise). A run passes when every cell is released and every released mean \
                is within --tolerance of the exact mean of the cohort's figures. Exits 1 when fewer than --required of \
                the runs pass.
                """)

        @Option(help: "A database seeded like `make run`'s.") var databaseURL: String
        @Option(help: "Requests to send.") var runs = 100
        @Option(help: "Largest relative error of a released mean.") var tolerance = 0.02
        @Option(help: "Fraction of runs that must pass.") var required = 0.95
        @Option(help: "GROUP_MIN_COHORT (the server's default).") var k = 1000

        func validate() throws {
            guard runs >= 1, tolerance > 0, (0...1).contains(required) else {
                throw ValidationError("--runs must be at least 1, --tolerance above 0 and --required within 0–1")
            }
        }

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let (runs, tolerance, required, k) = (runs, tolerance, required, k)
            let passed = try await withDatabase(url: databaseURL, logger: logger) { client in
                let bench = try await GroupBenchCompany.create(name: "README Bench", client: client, logger: logger)
                do {
                    let passed = try await Self.check(client: client, bench: bench, runs: runs, tolerance: tolerance, k: k, logger: logger)
                    try await bench.delete(client: client, logger: logger)
                    return passed
                } catch {
                    try? await bench.delete(client: client, logger: logger)
                    throw error
                }
            }
            if Double(passed) < required * Double(runs) {
                fail(
                    "only \(passed) of \(runs) runs kept every released mean within \(pct(tolerance)) of the exact mean (required: \(pct(required)))")
            }
        }

        /// The number of runs that passed.
        static func check(client: DatabasePool, bench: GroupBenchCompany, runs: Int, tolerance: Double, k: Int, logger: Logger) async throws -> Int {
            let service = bench.service(client: client, k: k)
            // The README's window: `date -u -d '7 days ago'` to `date -u -d yesterday`.
            let to = CalendarDate.today.adding(days: -1)
            let from = CalendarDate.today.adding(days: -7)
            let last = try await GroupBenchCompany.lastDay(client: client, logger: logger)
            guard last == to else {
                throw ValidationError(
                    "the population's data ends on \(last), not yesterday (\(to)): seed it afresh (d4h seed --people 20000 --days 7 --replace)")
            }
            let filters = [GroupRequest.Filter(type: .heartRate, min: 50, max: 90)]
            let demographics = GroupRequest.Demographics(ageMin: 30, ageMax: 49, sex: .female)
            let creation = GroupRequestService.Creation(
                types: [.heartRate], filters: filters, demographics: demographics, windowFrom: from, windowTo: to, bucket: .day,
                purpose: "Population study", subscriptionDays: nil, purposeCode: .healthcareResearch)
            let cohort = try await PrivacyBenchProbe.cohort(
                filters: filters, demographics: demographics, from: from, to: to, client: client, logger: logger)
            let exact = try await PrivacyBenchProbe.exactCells(
                cohort: cohort, type: .heartRate, bucket: .day, from: from, to: to, client: client, logger: logger)
            let truth = Dictionary(exact.compactMap { cell in cell.mean.map { (cell.bucketStart, $0) } }, uniquingKeysWith: { a, _ in a })

            var passed = 0
            var suppressed = 0
            var refused = 0
            var errors: [Double] = []
            var worstPerRun: [Double] = []
            var times: [Double] = []
            var margins: [Double] = []
            for _ in 0..<runs {
                let (request, time) = try await timed { try await service.create(creation, by: bench.principal, logger: logger) }
                times.append(time)
                guard request.status == .accepted else {
                    refused += 1
                    continue
                }
                let cells = try await service.results(id: request.id, for: bench.principal, logger: logger).cells
                var worst = 0.0
                var ok = cells.count == exact.count
                for cell in cells {
                    guard let mean = cell.mean, let exactMean = truth[cell.bucketStart] else {
                        suppressed += 1
                        ok = false
                        continue
                    }
                    let error = abs(mean - exactMean) / exactMean
                    errors.append(error)
                    worst = max(worst, error)
                    if let margin = cell.accuracy?.meanMargin95 { margins.append(margin / exactMean) }
                }
                worstPerRun.append(worst)
                if ok && worst <= tolerance { passed += 1 }
            }
            let people = exact.map(\.people)
            print("## The README's group request on `make run`'s population (\(try await GroupBenchCompany.population(client, logger)))")
            print(
                "Heart rate of women 30–49 whose mean heart rate is 50–90, \(from) to \(to), day buckets: \(exact.count) cells, cohort \(cohort.count) people (\(people.min() ?? 0)–\(people.max() ?? 0) per cell), k = \(k), ρ = \(short(PrivacySettings().defaultCellLoss)) per cell (`PRIVACY_CELL_RHO` default), `SecureNoise`; \(runs) requests through `GroupRequestService.create`."
            )
            print(
                "| runs | every mean within \(pct(tolerance)) | refused | suppressed cells | relative error of a mean: p50 / p95 / max | worst cell of a run: p95 | stated ±95 % (relative, median) | evaluation p50 ms |"
            )
            print("|---:|---:|---:|---:|---:|---:|---:|---:|")
            print(
                "| \(runs) | \(passed) (\(pct(Double(passed) / Double(runs)))) | \(refused) | \(suppressed) | \(percent(errors, 0.5)) / \(percent(errors, 0.95)) / \(percent(errors, 1)) | \(percent(worstPerRun, 0.95)) | \(percent(margins, 0.5)) | \(ms(percentile(times, 0.5))) |"
            )
            return passed
        }
    }
}
