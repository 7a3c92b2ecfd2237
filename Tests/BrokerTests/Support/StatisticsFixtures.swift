import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// What the statistics suites share: a caller whose peer band is known, her peers' birth dates, and days
/// counted from today.
enum StatisticsFixtures {
    static var year: Int { CalendarDate.today.year }

    /// A woman aged 35 this whole year (born on 1 January): her peers are "women aged 30–39".
    static func caller() -> TestHarness.Person {
        let birth = "\(year - 35)-01-01"
        return TestHarness.Person(fiscalCode: TestHarness.uniqueFiscalCode(birthDate: birth, sex: "F"), birthDate: birth, sex: "F")
    }

    /// Birth dates of women in the caller's band (aged 31–38 whatever today's date).
    static let peerBirthDates = ["\(year - 33)-06-15", "\(year - 38)-12-31", "\(year - 32)-03-03", "\(year - 37)-09-09", "\(year - 31)-07-07"]

    static func day(_ offset: Int, from date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date.addingTimeInterval(Double(offset) * 86_400))
    }

    /// One of the caller's own buckets, as `GET /v1/me/statistics` answers it.
    struct Bucket {
        var start: String
        var count: Int
        var days: Int
        var mean, min, max: Double
        var total: Double?
    }

    /// `GET /v1/me/statistics?query` for `token`, required to succeed: the body, and the caller's own buckets.
    static func statistics(_ harness: TestHarness, _ token: String, _ query: String) async throws -> (body: [String: Any], own: [Bucket]) {
        let response = try await harness.request(.get, "/v1/me/statistics?\(query)", token: token)
        try #require(response.status == .ok, "statistics answered \(response.status): \(harness.text(response))")
        let body = try harness.object(response)
        let own = (body["own"] as? [[String: Any]] ?? []).map {
            Bucket(
                start: $0["start"] as? String ?? "?", count: $0["count"] as? Int ?? -1, days: $0["days"] as? Int ?? -1,
                mean: ($0["mean"] as? NSNumber)?.doubleValue ?? .nan, min: ($0["min"] as? NSNumber)?.doubleValue ?? .nan,
                max: ($0["max"] as? NSNumber)?.doubleValue ?? .nan, total: ($0["total"] as? NSNumber)?.doubleValue)
        }
        return (body, own)
    }
}
