import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging
import PostgresNIO
import Synchronization

extension Bench {
    struct GroupQuantiles: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "group-quantiles",
            abstract: "Percentiles of group cells: the exponential mechanism against the old noisy histogram and OpenDP, on the same cells.",
            discussion: """
                The cells of `group-accuracy` (three cohorts × types × the last --days days of a seeded population), each \
                read once: its exact aggregate (`CellAggregateStore`) and its contributors' clamped figures. At each ρ per \
                cell, every cell is released --draws times through `CellMechanism` with `SecureNoise` (the new percentiles \
                and the mean), and --draws times by the baseline: the percentiles read from a noisy histogram of the type's \
                old bins at the old split (a fifth of ρ on the bins), as released until issue 32. Errors are against the exact \
                percentile (linear interpolation) and mean of the same clamped figures.

                The figures, the exact percentiles and the ρ each percentile cost are written to --out (cells.json), with \
                these errors (swift.json), for bench/quantile-opendp.py, which runs OpenDP's quantile mechanism on the same \
                cells and prints the table. Per-person figures go to that file only, never to the output. Also timed: the \
                percentile draws of a 180-cell release.
                """)

        @Option(help: "The database with a seeded population.") var databaseURL: String
        @Option(help: "Releases of each cell at each ρ, per method.") var draws = 200
        @Option(help: "Day cells per type and cohort (the last days with data).") var days = 7
        @Option(help: "ρ per cell, comma-separated.") var rhos = "0.001,0.01,0.1"
        @Option(help: "Types, comma-separated.") var types = "heart_rate,step_count,systolic_pressure,sleeping_hours"
        @Option(help: "Where cells.json and swift.json go (created).") var out: String
        @Option(help: "Cells of the timed release.") var timingCells = 180

        func validate() throws {
            guard draws >= 1, days >= 1, timingCells >= 1 else { throw ValidationError("--draws, --days and --timing-cells must be at least 1") }
            guard rhoValues.count == rhos.split(separator: ",").count, !rhoValues.isEmpty else { throw ValidationError("--rhos must be numbers") }
            guard typeValues.count == types.split(separator: ",").count, !typeValues.isEmpty else {
                throw ValidationError("--types must name sample types")
            }
            guard typeValues.allSatisfy({ Self.oldBins[$0] != nil }) else { throw ValidationError("--types: no old bins for one of them") }
        }

        var rhoValues: [Double] { rhos.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
        var typeValues: [SampleType] { types.split(separator: ",").compactMap { SampleType(rawValue: $0.trimmingCharacters(in: .whitespaces)) } }

        /// The baseline's histogram: each type's bins before issue 32 (`ContributionBounds` at e7968f5^). The new
        /// grid's bins are a multiple of these, over the same bounds.
        static let oldBins: [SampleType: Int] = [
            .heartRate: 40, .restingHeartRate: 40, .systolicPressure: 40, .diastolicPressure: 45, .oxygenSaturation: 40, .stepCount: 60,
            .distanceWalkingRunning: 50, .activeEnergyBurned: 40, .standingHours: 32, .sleepingHours: 28, .weight: 34, .height: 50,
            .bodyTemperature: 35, .respiratoryRate: 34, .heartRateVariability: 39, .bloodGlucose: 46, .vo2Max: 35,
        ]
        /// The old split's share of a cell's ρ for the histogram (count 0.2, sum 0.6, bins 0.2).
        static let oldBinShare = 0.2

        struct Cell: Sendable {
            var cohort: String
            var aggregate: PrivacyBenchProbe.Aggregate
            /// Clamped, ascending.
            var figures: [Double]
            var exact: [Double]
            var exactMean: Double
        }

        /// What cells.json holds for bench/quantile-opendp.py.
        struct CellFile: Codable {
            var cohort: String
            var type: String
            var day: String
            var lower: Double
            var upper: Double
            var bins: Int
            var exact: [Double]
            var figures: [Double]
        }

        /// The errors of one method and one figure over every draw of every cell of a row: their 95th
        /// percentile and a distribution-free 95 % interval for it (order statistics).
        struct ErrorSummary: Codable {
            var p95: Double
            var low: Double
            var high: Double
            var draws: Int
            var meanSigned: Double
        }

        struct Row: Codable {
            var type: String
            var cohort: String
            var peoplePerCell: Double
            var rho: Double
            /// What each percentile cost (the new mechanism's share, as released in `accuracy.percentileRho`).
            var percentileRho: Double
            var step: Double
            var oldBinWidth: Double
            var mean: ErrorSummary
            /// p10, p50, p90.
            var new: [ErrorSummary]
            var old: [ErrorSummary]
        }

        struct Timing: Codable {
            var rho: Double
            var cells: Int
            var releaseSeconds: Double
            var percentileSeconds: Double
        }

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let (draws, days, rhoValues, typeValues) = (draws, days, rhoValues, typeValues)
            let started = ContinuousClock.now
            let (cells, last, population) = try await withDatabase(url: databaseURL, logger: logger) { client in
                let last = try await GroupBenchCompany.lastDay(client: client, logger: logger)
                let first = last.adding(days: 1 - days)
                var cells: [Cell] = []
                for (label, demographics) in GroupAccuracy.cohorts {
                    let members = try await PrivacyBenchProbe.cohort(
                        filters: [], demographics: demographics, from: first, to: last, client: client, logger: logger)
                    for type in typeValues {
                        let aggregates = try await PrivacyBenchProbe.aggregates(
                            cohort: members, type: type, bucket: .day, from: first, to: last, client: client, logger: logger)
                        let figures = try await PrivacyBenchProbe.clampedFigures(
                            cohort: members, type: type, bucket: .day, from: first, to: last, client: client, logger: logger)
                        for aggregate in aggregates {
                            guard let values = figures[aggregate.bucketStart], !values.isEmpty else { continue }
                            cells.append(
                                Cell(
                                    cohort: label, aggregate: aggregate, figures: values,
                                    exact: [0.1, 0.5, 0.9].map { Self.exactPercentile(values, $0) },
                                    exactMean: values.reduce(0, +) / Double(values.count)))
                        }
                    }
                }
                return (cells, last, try await GroupBenchCompany.population(client, logger))
            }
            guard !cells.isEmpty else { throw ValidationError("no data in the last \(days) days: seed a population first") }

            let directory = URL(fileURLWithPath: out, isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            let files = cells.map {
                let b = PrivacyBenchProbe.bounds(of: $0.aggregate.type)
                return CellFile(
                    cohort: $0.cohort, type: $0.aggregate.type.rawValue, day: $0.aggregate.bucketStart, lower: b.lower, upper: b.upper, bins: b.bins,
                    exact: $0.exact, figures: $0.figures)
            }
            try encoder.encode(files).write(to: directory.appendingPathComponent("cells.json"))

            var rows: [Row] = []
            for type in typeValues {
                for (cohort, _) in GroupAccuracy.cohorts {
                    let group = cells.filter { $0.cohort == cohort && $0.aggregate.type == type }
                    guard !group.isEmpty else { continue }
                    rows += try await withThrowingTaskGroup(of: Row?.self) { tasks in
                        for rho in rhoValues { tasks.addTask { Self.measure(group, type: type, cohort: cohort, rho: rho, draws: draws) } }
                        return try await tasks.reduce(into: [Row]()) { rows, row in if let row { rows.append(row) } }
                    }.sorted { (one: Row, other: Row) in one.rho < other.rho }
                }
            }
            let timings = rhoValues.map { Self.timeRelease(cells, rho: $0, count: timingCells) }
            let seconds = Double((ContinuousClock.now - started).components.seconds)
            struct Run: Codable {
                var population: String
                var lastDay: String
                var days: Int
                var draws: Int
                var seconds: Double
                var rows: [Row]
                var timings: [Timing]
            }
            let run = Run(population: population, lastDay: last.description, days: days, draws: draws, seconds: seconds, rows: rows, timings: timings)
            try encoder.encode(run).write(to: directory.appendingPathComponent("swift.json"))
            print("group-quantiles: \(cells.count) cells, \(rows.count) rows, \(Int(seconds)) s; figures and errors in \(out)")
        }

        /// percentile_cont: linear interpolation between the two nearest ranks.
        static func exactPercentile(_ sorted: [Double], _ q: Double) -> Double {
            let position = q * Double(sorted.count - 1)
            let below = Int(position.rounded(.down))
            let above = min(below + 1, sorted.count - 1)
            return sorted[below] + (sorted[above] - sorted[below]) * (position - Double(below))
        }

        static func summary(_ errors: [Double], signed: Double) -> ErrorSummary {
            let sorted = errors.sorted()
            let n = Double(sorted.count)
            let spread = 1.96 * (n * 0.95 * 0.05).squareRoot()
            func at(_ rank: Double) -> Double { sorted[Int(rank.rounded()).clamped(to: 0...(sorted.count - 1))] }
            return ErrorSummary(
                p95: percentile(sorted, 0.95), low: at((n - 1) * 0.95 - spread), high: at((n - 1) * 0.95 + spread), draws: sorted.count,
                meanSigned: signed / n)
        }

        /// `draws` releases of every cell at ρ by each method; nil when a method released none of a figure (a
        /// tiny population, as `make bench-smoke` seeds: every draw suppressed), which has no error to show.
        static func measure(_ cells: [Cell], type: SampleType, cohort: String, rho: Double, draws: Int) -> Row? {
            let noise = SecureNoise()
            let b = PrivacyBenchProbe.bounds(of: type)
            let oldBinCount = Self.oldBins[type]!
            let oldWidth = (b.upper - b.lower) / Double(oldBinCount)
            // The old `CellCalibration.variance(sensitivity: 1, rho: ρ·0.2)`, ρ as the ledger rounds it.
            let oldVariance = UInt64(max(1, (1 / (2 * PrivacyLoss(rho: rho).rho * oldBinShare)).rounded(.up)))
            var newErrors: [[Double]] = [[], [], []]
            var oldErrors: [[Double]] = [[], [], []]
            var newSigned = [0.0, 0.0, 0.0]
            var oldSigned = [0.0, 0.0, 0.0]
            var meanErrors: [Double] = []
            var meanSigned = 0.0
            var percentileRho = 0.0
            for cell in cells {
                percentileRho = PrivacyBenchProbe.releaseWithoutNoise(cell.aggregate, rho: rho).accuracy?.percentileRho ?? .nan
                for _ in 0..<draws {
                    let release = PrivacyBenchProbe.release(cell.aggregate, rho: rho, minimumPeople: 0, noise: noise)
                    for (index, figure) in [release.p10, release.p50, release.p90].enumerated() {
                        guard let figure else { continue }
                        newErrors[index].append(abs(figure - cell.exact[index]))
                        newSigned[index] += figure - cell.exact[index]
                    }
                    if let mean = release.mean {
                        meanErrors.append(abs(mean - cell.exactMean))
                        meanSigned += mean - cell.exactMean
                    }
                }
                let histogram = oldHistogram(cell.figures, lower: b.lower, width: oldWidth, bins: oldBinCount)
                for _ in 0..<draws {
                    let noisy = histogram.map { $0 + noise.discreteGaussian(variance: oldVariance) }
                    for (index, q) in [0.1, 0.5, 0.9].enumerated() {
                        guard let figure = oldPercentile(q, of: noisy, lower: b.lower, upper: b.upper, width: oldWidth) else { continue }
                        let rounded = (figure / b.resolution).rounded() * b.resolution
                        oldErrors[index].append(abs(rounded - cell.exact[index]))
                        oldSigned[index] += rounded - cell.exact[index]
                    }
                }
            }
            guard !meanErrors.isEmpty, !newErrors.contains(where: \.isEmpty), !oldErrors.contains(where: \.isEmpty) else { return nil }
            return Row(
                type: type.rawValue, cohort: cohort, peoplePerCell: Double(cells.map(\.figures.count).reduce(0, +)) / Double(cells.count), rho: rho,
                percentileRho: percentileRho, step: (b.upper - b.lower) / Double(b.bins), oldBinWidth: oldWidth,
                mean: summary(meanErrors, signed: meanSigned),
                new: (0..<3).map { summary(newErrors[$0], signed: newSigned[$0]) },
                old: (0..<3).map { summary(oldErrors[$0], signed: oldSigned[$0]) })
        }

        /// The old bins of clamped figures, as the old SQL made them: `least(width_bucket(v, lower, upper, bins), bins) − 1`.
        static func oldHistogram(_ figures: [Double], lower: Double, width: Double, bins: Int) -> [Int64] {
            var histogram = [Int64](repeating: 0, count: bins)
            for figure in figures { histogram[Int(((figure - lower) / width).rounded(.down)).clamped(to: 0...(bins - 1))] += 1 }
            return histogram
        }

        /// The baseline, re-implemented from the old `NoisyPercentiles`: negative noisy bins count as empty,
        /// and people are taken as spread evenly within a bin.
        static func oldPercentile(_ q: Double, of bins: [Int64], lower: Double, upper: Double, width: Double) -> Double? {
            let counts = bins.map { Double(max(0, $0)) }
            let total = counts.reduce(0, +)
            guard total > 0 else { return nil }
            let target = q * total
            var below = 0.0
            for (index, count) in counts.enumerated() where count > 0 {
                if below + count >= target { return lower + (Double(index) + (target - below) / count) * width }
                below += count
            }
            return upper
        }

        /// A release of `count` cells (the bench's cells over and over, as a request of 2 types × 90 days
        /// would be), with the time spent in the percentiles' draws measured apart.
        static func timeRelease(_ cells: [Cell], rho: Double, count: Int) -> Timing {
            let noise = TimedNoise()
            let started = ContinuousClock.now
            for index in 0..<count {
                _ = PrivacyBenchProbe.release(cells[index % cells.count].aggregate, rho: rho, minimumPeople: 0, noise: noise)
            }
            let total = ContinuousClock.now - started
            return Timing(rho: rho, cells: count, releaseSeconds: total.seconds, percentileSeconds: noise.exponentialTime.seconds)
        }
    }
}

/// `SecureNoise`, with the time its exponential-mechanism draws take added up.
private final class TimedNoise: NoiseSource, Sendable {
    let secure = SecureNoise()
    private let spent = Mutex(Duration.zero)

    var exponentialTime: Duration { spent.withLock { $0 } }

    func discreteGaussian(variance: UInt64) -> Int64 { secure.discreteGaussian(variance: variance) }

    func exponentialMechanism(scores: [UInt64], numerator: UInt64, denominator: UInt64) -> Int {
        let started = ContinuousClock.now
        let index = secure.exponentialMechanism(scores: scores, numerator: numerator, denominator: denominator)
        let elapsed = ContinuousClock.now - started
        spent.withLock { $0 += elapsed }
        return index
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
