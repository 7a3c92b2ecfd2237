import BrokerDomain
import Foundation
import HTTPTypes

/// How a `BulkExportError` is answered over HTTP: problem documents, as everywhere in this API (a FHIR
/// client reads the status; the IG allows an OperationOutcome but does not require one).
extension BulkExportError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let errors):
            Problem(
                status: .badRequest, slug: "invalid-export-parameters", title: "Unsupported export parameters",
                detail: "This server cannot run the export as asked; errors names each parameter. Nothing was started.", errors: errors)
        case .planning(let seconds):
            Problem(
                status: .tooManyRequests, slug: "export-planning", title: "An export is already being planned",
                detail: "One of your bulk exports is still being planned; poll its status URL, then start the next one.",
                headers: [.retryAfter: String(seconds)])
        case .notFound:
            Problem(
                status: .notFound, slug: "export-not-found", title: "No such export",
                detail: "There is no bulk export or file with this id among yours, or it expired.")
        }
    }
}
