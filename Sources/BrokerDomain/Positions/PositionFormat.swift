/// JSON, CSV or GPX: how a download of positions is written (the API negotiates it: `PositionFormat+Negotiation`).
package enum PositionFormat: Sendable {
    case json, csv, gpx

    package var contentType: String {
        switch self {
        case .json: "application/json; charset=utf-8"
        case .csv: "text/csv; charset=utf-8"
        case .gpx: "application/gpx+xml; charset=utf-8"
        }
    }

    package var fileExtension: String? {
        switch self {
        case .json: nil
        case .csv: "csv"
        case .gpx: "gpx"
        }
    }
}
