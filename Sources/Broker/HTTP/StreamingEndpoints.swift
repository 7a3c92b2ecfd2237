import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime

/// The operations whose bodies stream from PostgreSQL to the socket. The generated handlers would need the
/// whole body as one value, so the transport registers these instead, for the same method and path;
/// they still go through every router middleware (auth scope, problems, metrics, security headers). The
/// downloads themselves (`BudgetedOperations+Downloads`) are what the console sends too.
struct StreamingEndpoints: Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    let api: BrokerAPI

    /// Keyed by `METHOD path`, with the path as `openapi.yaml` writes it.
    var handlers: [String: Handler] {
        [
            "GET /v1/single-requests/{id}/data": download,
            "GET /v1/single-requests/{id}/positions": downloadPositions,
            "GET /v1/me/export": export,
            "GET /v1/runs/{id}/live/events": liveEvents,
        ]
    }

    /// `GET /v1/single-requests/{id}/data?cursor=&format=`
    func download(_ request: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let principal = try await api.caller()
        let id = try api.requestID(metadata.pathParameters["id"].map(String.init) ?? "")
        let query = Self.query(of: request)
        let format = try ResponseFormat.negotiate(
            format: query["format"], accept: (request.headerFields[.accept] ?? "").split(separator: ",").map(String.init))
        let download = try await api.budgeted.singleRequestData(id: id, cursor: query["cursor"], format: format, by: principal, logger: api.logger)
        return (download.head, download.body)
    }

    /// `GET /v1/single-requests/{id}/positions?cursor=&format=`
    func downloadPositions(_ request: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let principal = try await api.caller()
        let id = try api.requestID(metadata.pathParameters["id"].map(String.init) ?? "")
        let query = Self.query(of: request)
        let format = try PositionFormat.negotiate(
            format: query["format"], accept: (request.headerFields[.accept] ?? "").split(separator: ",").map(String.init))
        let download = try await api.budgeted.singleRequestPositions(
            id: id, cursor: query["cursor"], format: format, by: principal, logger: api.logger)
        return (download.head, download.body)
    }

    /// `GET /v1/me/export`
    func export(_: HTTPRequest, _: HTTPBody?, _: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let download = try await api.budgeted.personalExport(of: try await api.caller(), logger: api.logger)
        return (download.head, download.body)
    }

    /// `GET /v1/runs/{id}/live/events`: server-sent events, one `positions` event per change.
    func liveEvents(_: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let id = try api.runID(metadata.pathParameters["id"].map(String.init) ?? "")
        let stream = try await api.liveFeeds.watch(id)
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "text/event-stream; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        return (head, HTTPBody(stream.map { ArraySlice($0) }, length: .unknown, iterationBehavior: .single))
    }

    static func query(of request: HTTPRequest) -> [String: String] {
        let items = URLComponents(string: request.path ?? "")?.queryItems ?? []
        return Dictionary(items.compactMap { item in item.value.map { (item.name, $0) } }, uniquingKeysWith: { first, _ in first })
    }
}
