import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Group-request fixtures shared by the group, privacy, ledger, burst and local-day suites: a small k,
/// populations with known figures, servers whose buckets close on a known day, and independent
/// computations of what a release should say.
enum GroupFixtures {
    static let k = 5

    static func smallK(_ configuration: inout BrokerConfiguration) { configuration.groupMinCohort = k }

    /// A person and their daily heart-rate readings (day of March 2026 → values) and steps.
    struct Member: Sendable {
        var sex = "F"
        var birthDate = "1990-05-01"
        var heartRate: [Int: [Double]] = [:]
        var steps: Double? = nil
    }

    /// Inserts the people and stores their samples through the real ingest (rollups included); returns ids.
    static func populate(_ harness: TestHarness, _ members: [Member]) async throws -> [UUID] {
        var ids: [UUID] = []
        for member in members {
            ids.append(try #require(UUID(uuidString: try await harness.insertPerson(birthDate: member.birthDate, sex: member.sex))))
        }
        let people = ids
        try await TestDatabase.withClient(harness.databaseURL) { client in
            for (member, id) in zip(members, people) {
                var samples: [Sample] = []
                for (day, values) in member.heartRate {
                    for (index, value) in values.enumerated() {
                        samples.append(Sample(type: .heartRate, value: value, at: Self.date(day: day, hour: 8 + index)))
                    }
                }
                if let steps = member.steps { samples.append(Sample(type: .stepCount, value: steps, at: Self.date(day: 1, hour: 20))) }
                try await client.ingest(samples, for: id)
            }
        }
        return ids
    }

    static func date(day: Int, hour: Int) -> Date {
        Timestamp.parse(String(format: "2026-03-%02dT%02d:00:00Z", day, hour))!
    }

    /// Five women at heart rate 70, one at 71, one at 75; six men at 90 with many steps.
    static var standard: [Member] {
        var members = (0..<5).map { _ in Member(heartRate: [1: [70], 2: [70]], steps: 5000) }
        members.append(Member(heartRate: [1: [71], 2: [71]], steps: 5000))
        members.append(Member(heartRate: [1: [75], 2: [75]], steps: 5000))
        members += (0..<6).map { _ in Member(sex: "M", birthDate: "1980-05-01", heartRate: [1: [90], 2: [90]], steps: 9000) }
        return members
    }

    /// k = 5, local webhook receivers, and live group subscriptions looked at every second.
    static func refreshEverySecond(_ configuration: inout BrokerConfiguration) {
        smallK(&configuration)
        WebhookFixtures.fast(&configuration)
        configuration.groupResultsRefreshInterval = .seconds(1)
    }

    /// A day bucket closes `12 + latenessHours` hours after its UTC end (the last time zone's day, then the
    /// lateness): with 12 hours, the day before yesterday has closed and yesterday has not, all day long
    /// (UTC), so which buckets a subscription may release does not depend on the hour a test runs.
    static func closedThroughTwoDaysAgo(_ configuration: inout BrokerConfiguration) {
        configuration.privacy.latenessHours = 12
    }

    /// With 36 hours, the same a day earlier: closed through three days ago.
    static func closedThroughThreeDaysAgo(_ configuration: inout BrokerConfiguration) {
        configuration.privacy.latenessHours = 36
    }

    /// Carries what the first server's phase learnt to the second's.
    final class Carried<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value?
        var value: Value? {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    /// A day passing, for subscriptions: `before` runs on a server where buckets have closed through three
    /// days ago, then `after` on a server over the same database where they have closed through the day
    /// before yesterday — so that day closes in between, whatever the hour.
    static func acrossADay<Value: Sendable>(
        configure: @escaping @Sendable (inout BrokerConfiguration) -> Void, noise: any NoiseSource,
        before: @escaping @Sendable (TestHarness) async throws -> Value,
        after: @escaping @Sendable (TestHarness, Value) async throws -> Void
    ) async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let carried = Carried<Value>()
            try await TestHarness.run(
                databaseURL: url,
                configure: {
                    configure(&$0)
                    closedThroughThreeDaysAgo(&$0)
                }, noise: noise
            ) { harness in
                carried.value = try await before(harness)
            }
            let value = try #require(carried.value)
            try await TestHarness.run(
                databaseURL: url,
                configure: {
                    configure(&$0)
                    closedThroughTwoDaysAgo(&$0)
                }, noise: noise
            ) { harness in
                try await after(harness, value)
            }
        }
    }

    /// A results item as canonical JSON text, to compare released cells across reads.
    static func canonical(_ item: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: item, options: [.sortedKeys]), as: UTF8.self)
    }

    /// `days` days before today (UTC).
    static func daysAgo(_ days: Int) -> CalendarDate { CalendarDate.today.adding(days: -days) }

    /// One heart-rate reading for each person at `hour` (UTC) of `day`, through the real ingest.
    static func upload(_ harness: TestHarness, _ people: [UUID], heartRate: Double, on day: CalendarDate, hour: Int = 0) async throws {
        let at = Date(timeIntervalSince1970: Double(day.dayNumber * 86_400 + hour * 3600))
        try await TestDatabase.withClient(harness.databaseURL) { client in
            for person in people {
                try await client.ingest(
                    [Sample(type: .heartRate, value: heartRate, at: at)], for: person)
            }
        }
    }

    /// The cells of a results answer that carry figures (not suppressed).
    static func released(_ results: [String: Any]) -> [[String: Any]] {
        (results["items"] as? [[String: Any]] ?? []).filter { $0["suppressed"] as? Bool == false }
    }

    /// What the exponential mechanism centres on, computed independently of `QuantileMechanism`: the first
    /// candidate of the type's grid (lower + j·step, j = 0…bins) with the least |(1 − q)·below − q·above|,
    /// counting the clamped figures strictly below and above it. With `NoNoise` a released percentile is this.
    static func gridPercentile(_ q: Double, of figures: [Double], type: SampleType) -> Double {
        let bounds = ContributionBounds.of(type)
        let step = (bounds.upper - bounds.lower) / Double(bounds.bins)
        let clamped = figures.map { min(max($0, bounds.lower), bounds.upper) }
        var best = (index: 0, distance: Double.infinity)
        for index in 0...bounds.bins {
            let candidate = bounds.lower + Double(index) * step
            let below = clamped.filter { $0 < candidate - step * 1e-9 }.count
            let above = clamped.filter { $0 > candidate + step * 1e-9 }.count
            let distance = abs((1 - q) * Double(below) - q * Double(above))
            if distance < best.distance - 1e-9 { best = (index, distance) }
        }
        return (bounds.lower + Double(best.index) * step).rounded(toMultipleOf: bounds.resolution)
    }

    /// percentile_cont: linear interpolation between the closest ranks (what the exact figures were).
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        let position = fraction * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Int(position.rounded(.up))
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    static func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }
}
