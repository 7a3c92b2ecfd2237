import BrokerDomain
import Foundation
import HTTPTypes
import OpenAPIRuntime

extension StreamingEndpoints {
    /// `GET /v1/fhir/bulk-files/{id}/{file}`: one file of a bulk export, as NDJSON Observations.
    func bulkExportFile(_ request: HTTPRequest, _: HTTPBody?, _ metadata: ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) {
        let principal = try await api.caller()
        let download = try await api.budgeted.bulkExportFile(
            export: metadata.pathParameters["id"].map(String.init) ?? "", file: metadata.pathParameters["file"].map(String.init) ?? "",
            of: api.services.bulkExports, by: principal, logger: api.logger
        ).encoded(acceptEncoding: request.headerFields[.acceptEncoding])
        return (download.head, download.body)
    }
}
