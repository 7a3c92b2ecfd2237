/// JSON, CSV or GPX, for a download of positions (`?format=` or `Accept`, JSON by default).
package enum PositionFormat: Sendable {
    case json, csv, gpx

    /// `?format=` wins; otherwise an Accept list naming CSV or GPX but not JSON asks for that one. (Without
    /// an Accept header the generated parser lists every type the operation offers.)
    static func negotiate(format: String?, accept: [String]) throws -> PositionFormat {
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

    var contentType: String {
        switch self {
        case .json: "application/json; charset=utf-8"
        case .csv: "text/csv; charset=utf-8"
        case .gpx: "application/gpx+xml; charset=utf-8"
        }
    }

    var fileExtension: String? {
        switch self {
        case .json: nil
        case .csv: "csv"
        case .gpx: "gpx"
        }
    }
}
