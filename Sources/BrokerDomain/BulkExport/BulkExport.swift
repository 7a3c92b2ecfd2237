import Foundation

/// A company's FHIR bulk export (the Bulk Data Access IG's system-level `$export`): one NDJSON file of
/// Observations per accepted single request of the company, each the samples that request releases in an
/// arrival range fixed by the planner (`BulkExportPlanner`). Files are not written anywhere: each is streamed
/// from the samples when fetched, through the request's download (`BulkExportService.filePlan`).
package struct BulkExport: Sendable, Equatable {
    package enum Status: String, Sendable {
        /// The planner is still fixing the files' ranges (`planned` of `total` done).
        case planning
        /// Every file is planned: the manifest can be given out.
        case complete
    }

    /// One file of the manifest.
    package struct File: Sendable, Equatable {
        /// The file's number in the export (`/v1/fhir/bulk-files/<export>/<n>.ndjson`).
        package var n: Int
        package var requestID: UUID
        /// How many Observations the file held when it was planned. Fewer are sent if the person since
        /// deleted samples or stopped sharing a type: the release rules are checked again on every fetch.
        package var count: Int64
    }

    package var id: UUID
    package var status: Status
    /// The database's time at the kick-off: the files hold what was uploaded up to it.
    package var transactionTime: Date
    /// The kick-off's URL, as the manifest's `request` repeats it.
    package var requestURL: String
    package var createdAt: Date
    package var expiresAt: Date
    package var planned: Int
    package var total: Int
    /// The planned files with at least one Observation, in order (empty while planning).
    package var files: [File]
}

/// What a kick-off asks for, as the client wrote it (the query string's parameters).
package struct BulkExportKickOff: Sendable {
    /// `_type`: a comma-separated list of resource types.
    package var types: String?
    /// `_since`: a FHIR instant.
    package var since: String?
    /// `_outputFormat`.
    package var outputFormat: String?
    /// The kick-off URL (the public URL plus the path and query it was sent to).
    package var requestURL: String

    package init(types: String?, since: String?, outputFormat: String?, requestURL: String) {
        self.types = types
        self.since = since
        self.outputFormat = outputFormat
        self.requestURL = requestURL
    }
}
