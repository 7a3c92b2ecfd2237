import BrokerDomain
import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime

extension BudgetedOperations {
    /// One file of a company's bulk export: charged to the download budget like the request's own download,
    /// before anything is read, and streamed and recorded by the same code (`streamDownload`).
    func bulkExportFile(export id: String, file: String, of exports: BulkExportService, by principal: Principal, logger: Logger)
        async throws -> Download
    {
        try await admit(principal, to: .downloads, roles: [.thirdParty], logger: logger)
        let plan = try await exports.filePlan(export: id, file: file, by: principal, logger: logger)
        let service = exports.singleRequests
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/fhir+ndjson"
        head.headerFields[.cacheControl] = "no-store"
        let body = ProducedByteStream(stallTimeout: streamStallTimeout) { send in
            try await service.streamDownload(plan, format: BulkExportService.fileFormat, logger: logger, send: send)
        }
        return Download(head: head, body: body.body)
    }
}
