import BrokerDomain
import Foundation

extension DownloadFormat {
    /// `?format=csv|json|fhir|ndjson` wins; otherwise an Accept list naming one of CSV, FHIR JSON or FHIR
    /// NDJSON but not plain JSON asks for it. (Without an Accept header the generated parser lists every
    /// type the operation offers, so "contains CSV" alone would pick CSV for a client that asked for nothing.)
    package static func negotiate(format: String?, accept: [String], offersFHIR: Bool = false) throws -> DownloadFormat {
        switch format {
        case "csv": return .csv
        case "json": return .json
        case "fhir" where offersFHIR: return .fhirBundle
        case "ndjson" where offersFHIR: return .fhirNDJSON
        case nil:
            let types = accept.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
            func named(_ prefix: String) -> Bool { types.contains { $0.hasPrefix(prefix) } }
            guard !named("application/json") else { return .json }
            if named("text/csv") { return .csv }
            if offersFHIR, named("application/fhir+json") { return .fhirBundle }
            if offersFHIR, named("application/fhir+ndjson") || named("application/ndjson") { return .fhirNDJSON }
            return .json
        default:
            throw Problem.validationFailed([
                FieldError(field: "format", message: offersFHIR ? "must be json, csv, fhir or ndjson" : "must be json or csv")
            ])
        }
    }
}
