import BrokerDomain
import Foundation

extension DownloadFormat {
    /// `?format=csv|json` wins; otherwise an Accept list naming CSV but not JSON asks for CSV. (Without an
    /// Accept header the generated parser lists every type the operation offers, so "contains CSV" alone
    /// would pick CSV for a client that asked for nothing.)
    package static func negotiate(format: String?, accept: [String]) throws -> DownloadFormat {
        switch format {
        case "csv": return .csv
        case "json": return .json
        case nil:
            let types = accept.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
            return types.contains { $0.hasPrefix("text/csv") } && !types.contains { $0.hasPrefix("application/json") } ? .csv : .json
        default: throw Problem.validationFailed([FieldError(field: "format", message: "must be json or csv")])
        }
    }
}
