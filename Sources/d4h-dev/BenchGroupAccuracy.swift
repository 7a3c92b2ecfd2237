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
    struct GroupAccuracy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "group-accuracy",
            abstract: "Accuracy of released group results: 95th-percentile error of the mean and the median per type, people and ρ per cell.",
            discussion: """
                For three cohorts of a seeded population (`d4h seed --people 10000 --days 90`) chosen by demographics, \
                each day cell of the last --days days with data is computed once, exactly, by the server's code \
                (`CellAggregateStore`), then released --draws times through `CellMechanism` with `SecureNoise` at each ρ \
                per cell: only the noise varies. Each release is compared with the exact mean and median of the people's \
                own figures (`percentile_cont`, unclamped), so the errors include what clamping and the histogram's bins do.
                """)

        @Option(help: "The database with a seeded population.") var databaseURL: String
        @Option(help: "Releases of each cell at each ρ.") var draws = 500
        @Option(help: "Day cells per type and cohort (the last days with data).") var days = 7
        @Option(help: "GROUP_MIN_COHORT: a release whose noisy count is below it is suppressed.") var k = 1000
        @Option(help: "ρ per cell, comma-separated.") var rhos = "0.001,0.01,0.1"
        @Option(help: "Types, comma-separated.") var types = "heart_rate,step_count,systolic_pressure,sleeping_hours"

        /// Cohorts of about 10,000, 2,300 and 1,150 of the 10,000 synthetic people, chosen as a company would
        /// (the smallest a little above k = 1000, so that most of its cells pass the noisy count).
        static let cohorts: [(label: String, demographics: GroupRequest.Demographics)] = [
            ("everyone", .init(ageMin: nil, ageMax: nil, sex: nil)),
            ("women 30–59", .init(ageMin: 30, ageMax: 59, sex: .female)),
            ("women 40–54", .init(ageMin: 40, ageMax: 54, sex: .female)),
        ]

        func validate() throws {
            guard draws >= 1, days >= 1 else { throw ValidationError("--draws and --days must be at least 1") }
            guard rhoValues.count == rhos.split(separator: ",").count, !rhoValues.isEmpty else { throw ValidationError("--rhos must be numbers") }
            guard typeValues.count == types.split(separator: ",").count, !typeValues.isEmpty else {
                throw ValidationError("--types must name sample types")
            }
        }

        var rhoValues: [Double] { rhos.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
        var typeValues: [SampleType] { types.split(separator: ",").compactMap { SampleType(rawValue: $0.trimmingCharacters(in: .whitespaces)) } }

        /// One cell: its exact aggregate and the exact figures it is judged against.
        struct Cell: Sendable {
            var aggregate: PrivacyBenchProbe.Aggregate
            var exact: PrivacyBenchProbe.ExactCell
        }

        struct Row: Sendable {
            var type: SampleType
            var cohort: String
            var peoplePerCell: Double
            var rho: Double
            var released: Double
            var meanAbs: Double, meanRel: Double, stated: Double
            var medianAbs: Double, medianRel: Double
            /// The mean signed error of the median (released − exact): its bias under noise.
            var medianSigned: Double
            /// The largest error over the cells without any noise (clamping, rounding, bins).
            var meanBias: Double, medianBias: Double
        }

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let (draws, days, k, rhoValues, typeValues) = (draws, days, k, rhoValues, typeValues)
            let started = ContinuousClock.now
            let (rows, last, population) = try await withDatabase(url: databaseURL, logger: logger) { client in
                let last = try await GroupBenchCompany.lastDay(client: client, logger: logger)
                let first = last.adding(days: 1 - days)
                var rows: [Row] = []
                for (label, demographics) in Self.cohorts {
                    let members = try await PrivacyBenchProbe.cohort(
                        filters: [], demographics: demographics, from: first, to: last, client: client, logger: logger)
                    for type in typeValues {
                        let aggregates = try await PrivacyBenchProbe.aggregates(
                            cohort: members, type: type, bucket: .day, from: first, to: last, client: client, logger: logger)
                        let exact = try await PrivacyBenchProbe.exactCells(
                            cohort: members, type: type, bucket: .day, from: first, to: last, client: client, logger: logger)
                        let cells = zip(aggregates, exact).filter { $0.1.people > 0 }.map { Cell(aggregate: $0.0, exact: $0.1) }
                        guard !cells.isEmpty else { throw ValidationError("no \(type.rawValue) data from \(first) to \(last)") }
                        rows += try await withThrowingTaskGroup(of: Row.self) { group in
                            for rho in rhoValues {
                                group.addTask { Self.measure(cells, type: type, cohort: label, rho: rho, draws: draws, k: k) }
                            }
                            return try await group.reduce(into: []) { $0.append($1) }
                        }
                    }
                }
                return (rows, last, try await GroupBenchCompany.population(client, logger))
            }
            let seconds = Double((ContinuousClock.now - started).components.seconds)
            print(
                "## Accuracy of group results (\(population); day cells of the \(days) days to \(last), \(draws) releases of each, k = \(k), `SecureNoise`; \(Int(seconds)) s)"
            )
            print()
            printCosts(rhoValues)
            print()
            printAccuracy(rows, types: typeValues, rhos: rhoValues)
            print()
            printBias(rows, types: typeValues)
        }

        /// `draws` releases of every cell at ρ; errors against the exact figures, over every released draw.
        static func measure(_ cells: [Cell], type: SampleType, cohort: String, rho: Double, draws: Int, k: Int) -> Row {
            let noise = SecureNoise()
            var meanErrors: [Double] = []
            var meanRelative: [Double] = []
            var medianErrors: [Double] = []
            var medianRelative: [Double] = []
            var margins: [Double] = []
            var released = 0
            var medianSigned = 0.0
            var meanBias = 0.0
            var medianBias = 0.0
            for cell in cells {
                guard let exactMean = cell.exact.mean, let exactMedian = cell.exact.p50 else { continue }
                let plain = PrivacyBenchProbe.releaseWithoutNoise(cell.aggregate, rho: rho)
                if let mean = plain.mean { meanBias = max(meanBias, abs(mean - exactMean)) }
                if let median = plain.p50 { medianBias = max(medianBias, abs(median - exactMedian)) }
                for _ in 0..<draws {
                    let release = PrivacyBenchProbe.release(cell.aggregate, rho: rho, minimumPeople: k, noise: noise)
                    guard let mean = release.mean, let median = release.p50 else { continue }
                    released += 1
                    meanErrors.append(abs(mean - exactMean))
                    meanRelative.append(abs(mean - exactMean) / abs(exactMean))
                    medianErrors.append(abs(median - exactMedian))
                    medianSigned += median - exactMedian
                    medianRelative.append(abs(median - exactMedian) / abs(exactMedian))
                    if let margin = release.accuracy?.meanMargin95 { margins.append(margin) }
                }
            }
            func p95(_ values: [Double]) -> Double { values.isEmpty ? .nan : percentile(values, 0.95) }
            return Row(
                type: type, cohort: cohort, peoplePerCell: Double(cells.map(\.exact.people).reduce(0, +)) / Double(cells.count), rho: rho,
                released: Double(released) / Double(cells.count * draws),
                meanAbs: p95(meanErrors), meanRel: p95(meanRelative), stated: margins.isEmpty ? .nan : percentile(margins, 0.5),
                medianAbs: p95(medianErrors), medianRel: p95(medianRelative), medianSigned: released > 0 ? medianSigned / Double(released) : .nan,
                meanBias: meanBias, medianBias: medianBias)
        }

        /// What a release of 7, 90 or 400 cells costs at each ρ per cell (one more cell for the cohort's
        /// noisy size), against the default budgets.
        func printCosts(_ rhos: [Double]) {
            let settings = PrivacySettings()
            let delta = 1e-7
            print(
                "What one request costs (ρ-zCDP, cells × ρ per cell + one for the cohort's noisy size; ε at δ = 10⁻⁷). Default budgets: ρ = \(short(settings.companyBudget)) per company per \(settings.companyPeriodDays) days, ρ = \(short(settings.personBudget - settings.peerReserve)) per person per year for group releases."
            )
            print("| ρ per cell | 7 cells (a week of days) | 90 cells (a quarter of days) | 400 cells (the most per release) |")
            print("|---:|---:|---:|---:|")
            for rho in rhos {
                let columns = [7, 90, 400].map { cells -> String in
                    let total = rho * Double(cells + 1)
                    let fits = total <= settings.companyBudget ? "\(Int((settings.companyBudget / total).rounded(.down)))/period" : "over budget"
                    return "ρ \(short(total)), ε \(String(format: "%.2g", PrivacyBenchProbe.epsilon(rho: total, delta: delta))) (\(fits))"
                }
                print("| \(short(rho)) | " + columns.joined(separator: " | ") + " |")
            }
        }

        func printAccuracy(_ rows: [Row], types: [SampleType], rhos: [Double]) {
            print(
                "95th-percentile error of released figures against the exact mean and median of the people's own figures (over every released draw of every cell)."
            )
            print(
                "| type (bounds) | cohort | people per cell | ρ per cell | released | mean: 95 % abs. error | mean: 95 % rel. error | stated ±95 % (median) | median: 95 % abs. error | median: 95 % rel. error | median: mean signed error |"
            )
            print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for type in types {
                let b = PrivacyBenchProbe.bounds(of: type)
                for cohort in Self.cohorts.map(\.label) {
                    for rho in rhos {
                        guard let r = rows.first(where: { $0.type == type && $0.cohort == cohort && $0.rho == rho }) else { continue }
                        let name = "\(type.rawValue) (\(short(b.lower))–\(short(b.upper)) \(type.unit), \(b.bins) bins)"
                        print(
                            "| \(name) | \(cohort) | \(Int(r.peoplePerCell.rounded())) | \(short(rho)) | \(String(format: "%.0f %%", 100 * r.released)) | \(sig(r.meanAbs)) | \(pct(r.meanRel)) | \(sig(r.stated)) | \(sig(r.medianAbs)) | \(pct(r.medianRel)) | \(signed(r.medianSigned)) |"
                        )
                    }
                }
            }
        }

        func printBias(_ rows: [Row], types: [SampleType]) {
            print(
                "Without any noise (the same cells through the mechanism with zero noise): the largest error over the cells, from clamping to the bounds, rounding and reading the median from the bins."
            )
            print("| type | cohort | mean: largest error | median: largest error |")
            print("|---|---|---:|---:|")
            for type in types {
                for cohort in Self.cohorts.map(\.label) {
                    guard let r = rows.first(where: { $0.type == type && $0.cohort == cohort }) else { continue }
                    print("| \(type.rawValue) | \(cohort) | \(sig(r.meanBias)) \(type.unit) | \(sig(r.medianBias)) \(type.unit) |")
                }
            }
        }
    }
}

/// Three significant digits, without an exponent for the magnitudes the benches print.
func sig(_ value: Double) -> String {
    guard value.isFinite else { return "–" }
    if value == 0 { return "0" }
    let digits = max(0, 2 - Int(floor(log10(abs(value)))))
    return String(format: "%.\(min(digits, 6))f", value)
}

/// The shortest form: 0.001, 0.08, 30000.
func short(_ value: Double) -> String { String(format: "%g", value) }

/// With its sign: "+12.3", "−0.0450".
func signed(_ value: Double) -> String {
    guard value.isFinite else { return "–" }
    return (value < 0 ? "−" : "+") + sig(abs(value))
}

func pct(_ fraction: Double) -> String {
    guard fraction.isFinite else { return "–" }
    return fraction >= 0.1 ? String(format: "%.0f %%", 100 * fraction) : String(format: "%.2g %%", 100 * fraction)
}
