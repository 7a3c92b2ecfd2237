import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime

/// The operations whose bodies stream from PostgreSQL to the socket. The generated handlers would need the
/// whole body as one value, so the transport registers these instead, for the same method and path;
/// they still go through every router middleware (auth scope, problems, metrics, security headers), and
/// draw on the account's download budget like the generated download handlers.
struct StreamingEndpoints: Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    let api: BrokerAPI

    /// Keyed by `METHOD path`, with the path as `openapi.yaml` writes it.
    var handlers: [String: Handler] {
        [
            "GET /v1/single-requests/{id}/data": download,
            "GET /v1/me/export": export,
        ]
    }

    /// `GET /v1/single-requests/{id}/data?cursor=&format=`
    func download(_ request: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let principal = try await api.caller(rateLimited: .downloads, roles: [.thirdParty])
        let id = try api.requestID(metadata.pathParameters["id"].map(String.init) ?? "")
        let query = Self.query(of: request)
        let format = try ResponseFormat.negotiate(
            format: query["format"], accept: (request.headerFields[.accept] ?? "").split(separator: ",").map(String.init))
        let plan = try await api.singleRequests.prepareDownload(id: id, cursor: query["cursor"], by: principal, logger: api.logger)
        let service = api.singleRequests, logger = api.logger
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = format == .csv ? "text/csv; charset=utf-8" : "application/json; charset=utf-8"
        response.headerFields[.cacheControl] = "no-store"
        response.headerFields[Self.nextCursorHeader] = plan.nextCursor
        if format == .csv {
            response.headerFields[.contentDisposition] = #"attachment; filename="request-\#(id.uuidString.lowercased()).csv""#
        }
        let body = ProducedByteStream(stallTimeout: api.streamStallTimeout) { send in
            try await service.streamDownload(plan, format: format, logger: logger, send: send)
        }
        return (response, body.body)
    }

    /// `GET /v1/me/export`
    func export(_ request: HTTPRequest, _: HTTPBody?, _: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let principal = try await api.caller(rateLimited: .downloads)
        let account = try await api.accounts.account(of: principal, logger: api.logger)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.rfc3339(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let profile = Array(try encoder.encode(Components.Schemas.Account(account)))
        let exporter = PersonalExport(client: api.singleRequests.client), logger = api.logger
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = "application/json; charset=utf-8"
        response.headerFields[.cacheControl] = "no-store"
        let body = ProducedByteStream(stallTimeout: api.streamStallTimeout) { send in
            try await exporter.stream(
                for: principal, profileJSON: profile,
                requestsJSON: { Array(try encoder.encode(Components.Schemas.SingleRequest($0))) },
                accessLogJSON: { Array(try encoder.encode(Components.Schemas.AccessLogEntry($0))) },
                logger: logger, send: send)
        }
        return (response, body.body)
    }

    static let nextCursorHeader = HTTPField.Name("Data4Help-Next-Cursor")!

    static func query(of request: HTTPRequest) -> [String: String] {
        let items = URLComponents(string: request.path ?? "")?.queryItems ?? []
        return Dictionary(items.compactMap { item in item.value.map { (item.name, $0) } }, uniquingKeysWith: { first, _ in first })
    }
}
