import BrokerDomain
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import OpenAPIRuntime
import ServiceLifecycle

/// The operations whose bodies stream from PostgreSQL to the socket. The generated handlers would need the
/// whole body as one value, so the transport registers these instead, for the same method and path;
/// they still go through every router middleware (auth scope, problems, metrics, security headers). The
/// downloads themselves (`BudgetedOperations+Downloads`) are what the console sends too.
struct StreamingEndpoints: Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    /// A handler whose body is written as the `ByteBuffer`s it yields. An `HTTPBody` carries bytes as
    /// `ArraySlice<UInt8>`, which the transport copies into a new buffer for every chunk of every response:
    /// a body that many responses share (one encoded event for every spectator) is written this way instead.
    typealias BufferHandler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, ResponseBody)

    let api: BrokerAPI

    /// Keyed by `METHOD path`, with the path as `openapi.yaml` writes it. Each is a download, compressed for a
    /// client that accepts zstd where it may be (`Download.encoded`).
    var handlers: [String: Handler] {
        [
            "GET /v1/single-requests/{id}/data": download,
            "GET /v1/single-requests/{id}/positions": downloadPositions,
            "GET /v1/me/export": export,
            "GET /v1/fhir/bulk-files/{id}/{file}": bulkExportFile,
        ]
    }

    /// Keyed the same way: the operations whose bodies are shared buffers.
    var bufferHandlers: [String: BufferHandler] {
        ["GET /v1/runs/{id}/live/events": liveEvents]
    }

    /// `GET /v1/single-requests/{id}/data?cursor=&format=`
    func download(_ request: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let (principal, id, query, accept) = try await downloadInput(request, metadata)
        let format = try DownloadFormat.negotiate(format: query["format"], accept: accept, offersFHIR: true)
        let download = try await api.budgeted.singleRequestData(id: id, cursor: query["cursor"], format: format, by: principal, logger: api.logger)
            .encoded(acceptEncoding: request.headerFields[.acceptEncoding])
        return (download.head, download.body)
    }

    /// What both downloads of a single request read: the caller, the request's id, the query, the Accept list.
    private func downloadInput(_ request: HTTPRequest, _ metadata: ServerRequestMetadata) async throws
        -> (Principal, UUID, [String: String], [String])
    {
        let principal = try await api.caller()
        let id = try api.requestID(metadata.pathParameters["id"].map(String.init) ?? "")
        return (principal, id, Self.query(of: request), (request.headerFields[.accept] ?? "").split(separator: ",").map(String.init))
    }

    /// `GET /v1/single-requests/{id}/positions?cursor=&format=`
    func downloadPositions(_ request: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let (principal, id, query, accept) = try await downloadInput(request, metadata)
        let format = try PositionFormat.negotiate(format: query["format"], accept: accept)
        let download = try await api.budgeted.singleRequestPositions(
            id: id, cursor: query["cursor"], format: format, by: principal, logger: api.logger
        ).encoded(acceptEncoding: request.headerFields[.acceptEncoding])
        return (download.head, download.body)
    }

    /// `GET /v1/me/export?format=json|fhir|ndjson`
    func export(_ request: HTTPRequest, _: HTTPBody?, _: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let principal = try await api.caller()
        let accept = (request.headerFields[.accept] ?? "").split(separator: ",").map(String.init)
        let format = Self.query(of: request)["format"]
        guard format != "csv" else { throw Problem.validationFailed([FieldError(field: "format", message: "must be json, fhir or ndjson")]) }
        let download: Download
        switch try DownloadFormat.negotiate(format: format, accept: accept, offersFHIR: true) {
        // The export is one document, not a table: an Accept list preferring CSV gets the JSON, as before.
        case .json, .csv: download = try await api.budgeted.personalExport(of: principal, logger: api.logger)
        case .fhirBundle: download = try await api.budgeted.personalObservations(of: principal, form: .bundle, logger: api.logger)
        case .fhirNDJSON: download = try await api.budgeted.personalObservations(of: principal, form: .ndjson, logger: api.logger)
        }
        let sent = download.encoded(acceptEncoding: request.headerFields[.acceptEncoding])
        return (sent.head, sent.body)
    }

    /// `GET /v1/runs/{id}/live/events`: server-sent events, one `positions` event per change. Each event is
    /// the buffer `RunLiveFeeds` encoded once for every spectator of the run, written to the socket as it is.
    func liveEvents(_: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, ResponseBody) {
        let id = try api.runID(metadata.pathParameters["id"].map(String.init) ?? "")
        let (events, stop) = try await api.liveFeeds.watch(id)
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "text/event-stream; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        return (head, ResponseBody(asyncSequence: EndsAtShutdown(base: events, stop: stop)))
    }

    static func query(of request: HTTPRequest) -> [String: String] {
        let items = URLComponents(string: request.path ?? "")?.queryItems ?? []
        return Dictionary(items.compactMap { item in item.value.map { (item.name, $0) } }, uniquingKeysWith: { first, _ in first })
    }
}
