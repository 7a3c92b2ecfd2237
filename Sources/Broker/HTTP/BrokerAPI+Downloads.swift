import BrokerOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A streamed download as the API and the console both send it: the response head, and the bytes,
/// produced from PostgreSQL while the client reads them (`ProducedByteStream`).
struct Download: Sendable {
    var head: HTTPResponse
    var body: HTTPBody
}

extension BrokerAPI {
    /// A single request's released data, for the company that sent it, charged to its download budget.
    /// A caller of another role is refused (403) before it is charged, as by the service's own check.
    func singleRequestData(id: UUID, cursor: String?, format: ResponseFormat, by principal: Principal) async throws -> Download {
        guard principal.role == .thirdParty else { throw WrongRole() }
        try charge(principal, for: .downloads)
        let plan = try await singleRequests.prepareDownload(id: id, cursor: cursor, by: principal, logger: logger)
        let service = singleRequests
        let logger = logger
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = format == .csv ? "text/csv; charset=utf-8" : "application/json; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        head.headerFields[Self.nextCursorHeader] = plan.nextCursor
        if format == .csv {
            head.headerFields[.contentDisposition] = #"attachment; filename="request-\#(id.uuidString.lowercased()).csv""#
        }
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            try await service.streamDownload(plan, format: format, logger: logger, send: send)
        }
        return Download(head: head, body: body.body)
    }

    /// Everything held about the caller as one JSON document, charged to their download budget.
    func personalExport(of principal: Principal) async throws -> Download {
        try admit(principal, to: .downloads)
        let account = try await accounts.account(of: principal, logger: logger)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.rfc3339(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let profile = Array(try encoder.encode(Components.Schemas.Account(account)))
        let exporter = PersonalExport(client: singleRequests.client)
        let logger = logger
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            try await exporter.stream(
                for: principal, profileJSON: profile,
                requestsJSON: { Array(try encoder.encode(Components.Schemas.SingleRequest($0))) },
                accessLogJSON: { Array(try encoder.encode(Components.Schemas.AccessLogEntry($0))) },
                logger: logger, send: send)
        }
        return Download(head: head, body: body.body)
    }

    static let nextCursorHeader = HTTPField.Name("Data4Help-Next-Cursor")!
}
