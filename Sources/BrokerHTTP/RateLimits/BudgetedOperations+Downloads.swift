import BrokerDomain
import BrokerOpenAPI
import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime

/// The downloads, each charged to the caller's download budget before a byte is read from the database.
extension BudgetedOperations {
    /// A single request's released data, for the company that sent it. Only companies are charged: the
    /// service refuses any other role (403) with nothing spent.
    package func singleRequestData(id: UUID, cursor: String?, format: DownloadFormat, by principal: Principal, logger: Logger) async throws
        -> Download
    {
        try await admit(principal, to: .downloads, roles: [.thirdParty], logger: logger)
        let plan = try await singleRequests.prepareDownload(id: id, cursor: cursor, by: principal, logger: logger)
        let service = singleRequests
        let head = Download.head(
            contentType: format.contentType, nextCursor: plan.nextCursor,
            filename: format.fileExtension.map { "request-\(id.uuidString.lowercased()).\($0)" })
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            try await service.streamDownload(plan, format: format, logger: logger, send: send)
        }
        return Download(head: head, body: body.body)
    }

    /// A single request's released positions (JSON, CSV or GPX), for the company that sent it.
    func singleRequestPositions(id: UUID, cursor: String?, format: PositionFormat, by principal: Principal, logger: Logger) async throws
        -> Download
    {
        try await admit(principal, to: .downloads, roles: [.thirdParty], logger: logger)
        let plan = try await singleRequests.preparePositionDownload(id: id, cursor: cursor, by: principal, logger: logger)
        let service = singleRequests
        let head = Download.head(
            contentType: format.contentType, nextCursor: plan.nextCursor,
            filename: format.fileExtension.map { "positions-\(id.uuidString.lowercased()).\($0)" })
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            try await service.streamPositions(plan, format: format, logger: logger, send: send)
        }
        return Download(head: head, body: body.body)
    }

    /// A person's samples as FHIR Observations (a Bundle or NDJSON), the FHIR form of their export.
    package func personalObservations(of principal: Principal, form: FHIRObservationEncoder.Form, logger: Logger) async throws -> Download {
        guard principal.role == .user else {
            throw Problem.validationFailed([FieldError(field: "format", message: "fhir and ndjson hold a person's samples; use json")])
        }
        try await admit(principal, to: .downloads, logger: logger)
        let exporter = PersonalExport(client: singleRequests.client, clock: accounts.clock)
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = form == .bundle ? DownloadFormat.fhirBundle.contentType : DownloadFormat.fhirNDJSON.contentType
        head.headerFields[.cacheControl] = "no-store"
        head.headerFields.append(HTTPField(name: .vary, value: "Accept"))  // the format may come from `Accept`
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            try await exporter.streamObservations(of: principal.accountID, form: form, logger: logger, send: send)
        }
        return Download(head: head, body: body.body)
    }

    /// Everything held about the caller as one JSON document.
    package func personalExport(of principal: Principal, logger: Logger) async throws -> Download {
        try await admit(principal, to: .downloads, logger: logger)
        let account = try await accounts.account(of: principal, logger: logger)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.rfc3339(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let profile = Array(try encoder.encode(Components.Schemas.Account(account)))
        let exporter = PersonalExport(client: singleRequests.client, clock: accounts.clock)
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        head.headerFields.append(HTTPField(name: .vary, value: "Accept"))  // the format may come from `Accept`
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            try await exporter.stream(
                for: principal, profileJSON: profile,
                requestsJSON: { Array(try encoder.encode(Components.Schemas.SingleRequest($0))) },
                accessLogJSON: { Array(try encoder.encode(Components.Schemas.AccessLogEntry($0))) },
                logger: logger, send: send)
        }
        // The document puts the companies' own words (their names, each request's purpose) beside the person's
        // profile and fiscal code: compressed, its length would let someone who sees it on the wire, and can ask
        // the person's data with purposes of their choosing, test guesses of the profile (BREACH).
        return Download(head: head, body: body.body, compressible: false)
    }

    /// The audit log as CSV, oldest first, for an auditor: the whole log in one response is a download (a JSON
    /// page of at most 1000 events is not). The API and the console each send it with their own head (the
    /// contract's `text/csv`; an attachment).
    package func auditEventsCSV(_ query: AuditTrail.Query, by principal: Principal, logger: Logger) async throws -> HTTPBody {
        try await auditEvents(
            query, by: principal, header: Array("seq,at,actor_id,actor_role,action,request_id,subject,details,prev_hash,hash\r\n".utf8),
            logger: logger
        ) { entries in Array(entries.map(AuditCSV.line).joined().utf8) }
    }

    /// The audit log as FHIR R4 `AuditEvent` resources, one a line (`application/fhir+ndjson`), oldest first,
    /// for an auditor; `issuer` (the server's public URL) is each event's observer. The same download as the CSV.
    func auditEventsNDJSON(_ query: AuditTrail.Query, issuer: String, by principal: Principal, logger: Logger) async throws -> HTTPBody {
        try await auditEvents(query, by: principal, header: [], logger: logger) { entries in
            let encoder = FHIRAuditEvent.makeEncoder()
            return try entries.flatMap { try FHIRAuditEvent.line($0, issuer: issuer, encoder: encoder) }
        }
    }

    /// Every matching event, streamed: `header`, then each page of a thousand events as `encode` writes it,
    /// each page read on a short lease. Only auditors are charged; the first page is read before the
    /// response starts, so any other role is refused (403, by the audit trail) with nothing spent and no
    /// head sent.
    private func auditEvents(
        _ query: AuditTrail.Query, by principal: Principal, header: [UInt8], logger: Logger,
        encode: @escaping @Sendable ([AuditTrail.Entry]) throws -> [UInt8]
    ) async throws -> HTTPBody {
        try await admit(principal, to: .downloads, roles: [.auditor], logger: logger)
        let trail = auditTrail
        let first = try await trail.events(query, page: PageRequest(limit: 1000), for: principal, logger: logger)
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            if !header.isEmpty { guard await send(header) else { return } }
            var page = first
            while true {
                guard !page.items.isEmpty, try await send(encode(page.items)), let next = page.next else { break }
                page = try await trail.events(query, page: PageRequest(limit: 1000, cursor: next), for: principal, logger: logger)
            }
        }
        return body.body
    }
}
