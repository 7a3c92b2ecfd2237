import BrokerDomain
import Foundation

extension PositionFormat {
    /// `?format=` wins; otherwise an Accept list naming CSV or GPX but not JSON asks for that one. (Without
    /// an Accept header the generated parser lists every type the operation offers.)
    package static func negotiate(format: String?, accept: [String]) throws -> PositionFormat {
        switch format {
        case "csv": return .csv
        case "json": return .json
        case "gpx": return .gpx
        case nil:
            let types = accept.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
            if types.contains(where: { $0.hasPrefix("application/json") }) { return .json }
            if types.contains(where: { $0.hasPrefix("application/gpx+xml") }) { return .gpx }
            return types.contains { $0.hasPrefix("text/csv") } ? .csv : .json
        default: throw Problem.validationFailed([FieldError(field: "format", message: "must be json, csv or gpx")])
        }
    }
}
