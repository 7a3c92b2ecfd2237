import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import Logging

extension Bench {
    struct PeerAccuracy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "peer-accuracy",
            abstract:
                "Accuracy of peer statistics' monthly medians per type and band: 95th-percentile error, target, how often shown, margin coverage.",
            discussion: """
                For one closed month (default: the last closed one), each sex-and-age band's peer cell of each type is \
                computed once, exactly, by the server's code (`PeerCellStore.exactCells`), then released --draws times \
                through `CellMechanism.peerFigures` with `SecureNoise` at the default peer cell loss: only the noise \
                varies. Each release's median is compared with the exact median of the same clamped per-person month \
                figures. Bands with fewer than --min-people people are left out. Exit 1 when a band misses its target.
                """)

        @Option(help: "The database with a seeded population (`d4h-dev seed --people 20000 --days 7`, ending in --month).")
        var databaseURL: String
        @Option(help: "Releases of each cell.") var draws = 500
        @Option(help: "GROUP_MIN_COHORT: a cell whose noisy count is below it is not shown.") var k = 1000
        @Option(help: "Bands with fewer people are not reported.") var minPeople = 1000
        @Option(help: "The month, YYYY-MM (default: the last closed month).") var month: String?
        @Option(help: "Types, comma-separated.") var types = "heart_rate,resting_heart_rate,step_count,sleeping_hours"

        func validate() throws {
            guard draws >= 1, k >= 1, minPeople >= 1 else { throw ValidationError("--draws, --k and --min-people must be at least 1") }
            if let month, firstDay(month) == nil { throw ValidationError("--month must be YYYY-MM") }
            guard typeValues.count == types.split(separator: ",").count, !typeValues.isEmpty else {
                throw ValidationError("--types must name sample types")
            }
        }

        var typeValues: [SampleType] { types.split(separator: ",").compactMap { SampleType(rawValue: $0.trimmingCharacters(in: .whitespaces)) } }
        func firstDay(_ text: String) -> CalendarDate? { CalendarDate(iso: text + "-01") }

        struct Row: Sendable {
            var type: SampleType
            var band: String
            var people: Int
            var error95: Double
            var target: Double
            var shown: Double
            var covered: Double
            var margin: Double
        }

        func run() async throws {
            let logger = makeLogger(level: .warning)
            let settings = PrivacySettings()
            let (draws, k, minPeople) = (draws, k, minPeople)
            let month = self.month.flatMap(firstDay) ?? PeerStatistics.lastClosedMonth(at: Date(), latenessHours: settings.latenessHours)
            let started = ContinuousClock.now
            let typeValues = typeValues
            let (rows, skipped) = try await withDatabase(url: databaseURL, logger: logger) { client in
                var rows: [Row] = []
                var skipped: [String] = []
                for type in typeValues {
                    let cells = try await PeerBenchProbe.cells(month: month, type: type, client: client, logger: logger)
                    let large = cells.filter { $0.people >= minPeople }
                    if large.isEmpty { skipped.append("\(type.rawValue) (largest band: \(cells.map(\.people).max() ?? 0) people)") }
                    rows += try await withThrowingTaskGroup(of: Row.self) { group in
                        for cell in large { group.addTask { Self.measure(cell, settings: settings, draws: draws, k: k) } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                return (rows, skipped)
            }
            let seconds = Int((ContinuousClock.now - started).components.seconds)
            let rho = settings.peerCellLoss.rho
            print(
                "## Accuracy of peer medians (month \(month.description.prefix(7)); bands of at least \(minPeople) people; \(draws) releases each, k = \(k), ρ \(rho) per cell, `SecureNoise`; \(seconds) s)"
            )
            print()
            print("| type | band | people | 95th pct \\|p50 − exact\\| | target | meets | shown | stated margin (median) | margin covers error |")
            print("|---|---|---:|---:|---:|:---:|---:|---:|---:|")
            let order = Dictionary(uniqueKeysWithValues: typeValues.enumerated().map { ($1, $0) })
            for row in rows.sorted(by: { (order[$0.type]!, $0.band) < (order[$1.type]!, $1.band) }) {
                print(
                    "| \(row.type.rawValue) | \(row.band) | \(row.people) | \(Self.figure(row.error95)) | ±\(Self.figure(row.target)) | \(row.error95 <= row.target ? "yes" : "**no**") | \(Self.percent(row.shown)) | ±\(Self.figure(row.margin)) | \(Self.percent(row.covered)) |"
                )
            }
            for line in skipped { print("\nNo band of \(minPeople) people or more: \(line).") }
            if rows.contains(where: { $0.error95 > $0.target }) { throw ExitCode(1) }
        }

        /// `draws` releases of one cell: the errors of its median against the exact one.
        static func measure(_ cell: PeerBenchProbe.Cell, settings: PrivacySettings, draws: Int, k: Int) -> Row {
            let noise = SecureNoise()
            var errors: [Double] = []
            var margins: [Double] = []
            var shown = 0
            var covered = 0
            for _ in 0..<draws {
                let release = PeerBenchProbe.release(cell, settings: settings, minimumPeople: k, noise: noise)
                let error = abs(release.figures.p50 - cell.median)
                errors.append(error)
                margins.append(release.p50Margin95)
                if release.shown { shown += 1 }
                if error <= release.p50Margin95 { covered += 1 }
            }
            return Row(
                type: cell.type, band: "\(cell.sex == .female ? "women" : "men") \(cell.ageFrom)–\(cell.ageFrom + 9)", people: cell.people,
                error95: quantile(errors, 0.95), target: PeerAccuracyTarget.of(cell.type), shown: Double(shown) / Double(draws),
                covered: Double(covered) / Double(draws), margin: quantile(margins, 0.5))
        }

        static func quantile(_ values: [Double], _ q: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
        }

        static func figure(_ value: Double) -> String { value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value) }
        static func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
    }
}
