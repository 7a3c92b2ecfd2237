import Foundation
import Logging

/// Companies' FHIR bulk exports: the kick-off, the status (progress, then the manifest), cancellation, and
/// the plan of one file's download. The files are the company's single requests' downloads, in ranges the
/// planner fixed (`BulkExportPlanner`): each fetch goes through the same release rules as a download
/// (`SingleRequestService.streamDownload`) and is recorded as a release like one.
package struct BulkExportService: Sendable {
    package init(client: DatabasePool, singleRequests: SingleRequestService, publicURL: String, timeToLive: Duration, clock: WallClock) {
        self.client = client
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        self.singleRequests = singleRequests
        self.timeToLive = timeToLive
        self.clock = clock
    }

    let client: DatabasePool
    package let singleRequests: SingleRequestService
    /// `PUBLIC_URL`, without a trailing slash: the IG's status and file URLs are absolute.
    package let publicURL: String
    /// `BULK_EXPORT_TTL`: how long an export's status and files can be read after its kick-off.
    package let timeToLive: Duration
    let clock: WallClock

    /// How a file's lines are written: one Observation a line, as the downloads' `format=ndjson`.
    package static let fileFormat = DownloadFormat.fhirNDJSON

    /// The resource types an export can hold.
    static let resourceTypes = ["Observation"]
    /// The `_outputFormat` values the IG lets a server treat as NDJSON.
    static let outputFormats: Set<String> = ["application/fhir+ndjson", "application/ndjson", "ndjson"]

    /// The status URL of export `id`.
    package func statusURL(_ id: UUID) -> String { "\(publicURL)/v1/fhir/bulk-status/\(id.uuidString.lowercased())" }

    /// The URL of file `n` of export `id`.
    package func fileURL(_ id: UUID, n: Int) -> String { "\(publicURL)/v1/fhir/bulk-files/\(id.uuidString.lowercased())/\(n).ndjson" }

    /// Starts an export of every accepted single request the company sent; returns its id. 400 for a
    /// parameter this server does not support, 429 while another of the company's exports is planning.
    package func kickOff(_ kickOff: BulkExportKickOff, by principal: Principal, logger: Logger) async throws -> UUID {
        guard principal.role == .thirdParty else { throw WrongRole("Only companies export the data of their requests.") }
        let (types, since) = try Self.validate(kickOff)
        let id = UUID()
        let now = clock.now
        let expires = now.addingTimeInterval(Double(timeToLive.components.seconds))
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await BulkExportStore.insert(
                    id: id, company: principal.accountID, types: types.joined(separator: ","), since: since, requestURL: kickOff.requestURL,
                    createdAt: now, expiresAt: expires, on: connection, logger: logger)
            }
        } catch let error where PostgresErrors.uniqueViolation(in: error) == BulkExportStore.onePlanningPerCompany {
            throw BulkExportError.planning(retryAfterSeconds: 5)
        }
        return id
    }

    /// The parameters as this server reads them: the resource types (Observation when none is named) and `_since`.
    static func validate(_ kickOff: BulkExportKickOff) throws -> (types: [String], since: Date?) {
        var errors: [FieldError] = []
        // A query string's `+` arrives as a space: the IG's own `application/fhir+ndjson` and an instant's
        // `+01:00` are written with a raw `+`, and neither value ever holds a space.
        let outputFormat = kickOff.outputFormat?.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "+")
        let sinceText = kickOff.since?.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "+")
        if let format = outputFormat, !outputFormats.contains(format) {
            errors.append(FieldError(field: "_outputFormat", message: "must be application/fhir+ndjson, application/ndjson or ndjson"))
        }
        var types = resourceTypes
        if let list = kickOff.types {
            types = list.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            for type in types.prefix(100) where !resourceTypes.contains(type) {
                errors.append(
                    FieldError(field: "_type", message: type.isEmpty ? "must not be empty" : "\(type.prefix(64)) is not exported (only Observation)"))
            }
        }
        var since: Date?
        if let text = sinceText {
            since = Timestamp.parse(text)
            if since == nil { errors.append(FieldError(field: "_since", message: "must be a FHIR instant such as 2026-03-01T08:00:00Z")) }
        }
        guard errors.isEmpty else { throw BulkExportError.invalid(errors) }
        return (Array(Set(types)).sorted(), since)
    }

    /// The caller's export (404 for anyone else's, or one expired).
    package func export(id text: String, by principal: Principal, logger: Logger) async throws -> BulkExport {
        guard principal.role == .thirdParty else { throw WrongRole("Only companies export the data of their requests.") }
        guard let id = UUID(uuidString: text) else { throw BulkExportError.notFound }
        let now = clock.now
        let export = try await client.withConnection { connection in
            try await BulkExportStore.export(id: id, company: principal.accountID, now: now, on: connection, logger: logger)
        }
        guard let export else { throw BulkExportError.notFound }
        return export
    }

    /// Deletes the caller's export (planning or complete): its status and files answer 404 from now on.
    package func delete(id text: String, by principal: Principal, logger: Logger) async throws {
        guard principal.role == .thirdParty else { throw WrongRole("Only companies export the data of their requests.") }
        guard let id = UUID(uuidString: text) else { throw BulkExportError.notFound }
        let deleted = try await client.withTransaction(logger: logger) { connection in
            try await BulkExportStore.delete(id: id, company: principal.accountID, on: connection, logger: logger)
        }
        guard deleted else { throw BulkExportError.notFound }
    }

    /// The download of file `n` of the caller's export: its request's released samples in the planned range.
    /// The request is read again, as its download reads it: if the person was erased, or the request no
    /// longer releases that far, the file holds less; each chunk still leaves out what the person unshared.
    package func filePlan(export text: String, file name: String, by principal: Principal, logger: Logger) async throws -> DownloadPlan {
        guard principal.role == .thirdParty else { throw WrongRole("Only companies export the data of their requests.") }
        guard let id = UUID(uuidString: text), name.hasSuffix(".ndjson"), let n = Int(name.dropLast(".ndjson".count)), n >= 1,
            n <= Int(Int32.max)
        else { throw BulkExportError.notFound }
        let now = clock.now
        return try await client.withConnection { connection in
            guard
                let file = try await BulkExportStore.file(export: id, n: n, company: principal.accountID, now: now, on: connection, logger: logger),
                let (request, arrived) = try await SingleRequestStore.releaseBound(
                    requestID: file.requestID, sender: principal.accountID, on: connection, logger: logger),
                request.status == .accepted, let userID = request.userID
            else { throw BulkExportError.notFound }
            let bound = min(file.bound, arrived)
            let available = try await SingleRequestStore.availableTypes(
                userID: userID, types: request.types.sampleTypes, from: request.windowFrom, to: request.windowTo, bound: bound,
                on: connection, logger: logger)
            // No cursor is handed out: the manifest's URL is the way back to the same file.
            return DownloadPlan(
                request: request, userID: userID, cursor: min(file.cursor, bound), bound: bound, availableTypes: available, nextCursor: "",
                subject: try await singleRequests.receipts.pseudonyms.pseudonym(of: userID, in: request.id, on: connection, logger: logger),
                primaryPosition: try await singleRequests.reads.planPosition(on: connection, logger: logger))
        }
    }
}
