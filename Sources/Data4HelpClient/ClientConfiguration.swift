import Foundation
import OpenAPIRuntime

/// Dates as the Data4Help server writes them: RFC 3339, with a fraction of a second only when there is one.
/// Foundation's default ISO 8601 transcoder rejects fractions, so clients should use `Configuration.data4Help`.
public struct RFC3339FractionalDateTranscoder: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
            .replacingOccurrences(of: "+0000", with: "Z")
    }

    public func decode(_ text: String) throws -> Date {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) {
            return date
        }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an RFC 3339 time: \(text)"))
    }
}

extension Configuration {
    /// The configuration for talking to a Data4Help server.
    public static var data4Help: Configuration { Configuration(dateTranscoder: RFC3339FractionalDateTranscoder()) }
}
