import BrokerDomain
import Foundation
import OpenAPIRuntime

/// Dates in API bodies: RFC 3339 in UTC, with a fraction of a second only when there is one (to the
/// microsecond, as stored), so `08:00:00.5Z` never comes back as `08:00:00Z`.
struct RFC3339DateTranscoder: DateTranscoder {
    func encode(_ date: Date) throws -> String { Timestamp.rfc3339(date) }

    func decode(_ text: String) throws -> Date {
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an RFC 3339 time: \(text)"))
        }
        return date
    }
}
