import Foundation

/// How released samples are written out (the API negotiates it: `DownloadFormat+Negotiation`): Data4Help's
/// JSON or CSV, or FHIR R4 Observations (`docs/fhir.md`) as one `Bundle` of type collection or as NDJSON,
/// one Observation a line, as the FHIR Bulk Data files are.
package enum DownloadFormat: Sendable {
    case json, csv
    case fhirBundle, fhirNDJSON

    package var contentType: String {
        switch self {
        case .json: "application/json; charset=utf-8"
        case .csv: "text/csv; charset=utf-8"
        case .fhirBundle: "application/fhir+json; charset=utf-8"
        case .fhirNDJSON: "application/fhir+ndjson"
        }
    }

    /// The extension of the file a browser saves it as, for the formats people save rather than read.
    package var fileExtension: String? {
        switch self {
        case .json, .fhirBundle: nil
        case .csv: "csv"
        case .fhirNDJSON: "ndjson"
        }
    }
}
