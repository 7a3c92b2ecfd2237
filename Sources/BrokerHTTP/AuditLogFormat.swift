import BrokerDomain
import Foundation

/// What `GET /v1/audit/events` answers with: JSON pages, or the whole log streamed as CSV or as FHIR
/// `AuditEvent` NDJSON.
enum AuditLogFormat: Sendable, Equatable {
    case json, csv, ndjson

    /// `?format=` wins; otherwise an Accept list naming CSV or FHIR NDJSON but not JSON asks for that one.
    /// (Without an Accept header the generated parser lists every type the operation offers, so "contains
    /// CSV" alone would pick CSV for a client that asked for nothing.)
    static func negotiate(format: String?, accept: [String]) throws -> AuditLogFormat {
        switch format {
        case "json": return .json
        case "csv": return .csv
        case "ndjson": return .ndjson
        case nil:
            let types = accept.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
            if types.contains(where: { $0.hasPrefix("application/json") }) { return .json }
            if types.contains(where: { $0.hasPrefix("application/fhir+ndjson") }) { return .ndjson }
            return types.contains { $0.hasPrefix("text/csv") } ? .csv : .json
        default: throw Problem.validationFailed([FieldError(field: "format", message: "must be json, csv or ndjson")])
        }
    }
}
