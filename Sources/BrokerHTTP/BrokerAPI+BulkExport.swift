import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

/// The FHIR Bulk Data Access IG's `$export` for companies: kick-off, status (progress, then the manifest),
/// deletion. The files stream (`StreamingEndpoints+BulkExport`).
extension BrokerAPI {
    func fhirBulkExportKickOff(_ input: Operations.FhirBulkExportKickOff.Input) async throws -> Operations.FhirBulkExportKickOff.Output {
        let id = try await kickOffBulkExport(types: input.query._type, since: input.query._since, outputFormat: input.query._outputFormat)
        return .accepted(.init(headers: .init(contentLocation: services.bulkExports.statusURL(id))))
    }

    func fhirBulkExportKickOffPost(_ input: Operations.FhirBulkExportKickOffPost.Input) async throws
        -> Operations.FhirBulkExportKickOffPost.Output
    {
        let id = try await kickOffBulkExport(types: input.query._type, since: input.query._since, outputFormat: input.query._outputFormat)
        return .accepted(.init(headers: .init(contentLocation: services.bulkExports.statusURL(id))))
    }

    /// Both kick-offs: `Prefer: respond-async` is the only way this server answers, so it is not required.
    private func kickOffBulkExport(types: String?, since: String?, outputFormat: String?) async throws -> UUID {
        let principal = try await caller()
        var components = URLComponents()
        components.queryItems = [("_type", types), ("_since", since), ("_outputFormat", outputFormat)].compactMap { name, value in
            value.map { URLQueryItem(name: name, value: $0) }
        }
        let query = components.queryItems?.isEmpty == false ? "?" + (components.percentEncodedQuery ?? "") : ""
        let kickOff = BulkExportKickOff(
            types: types, since: since, outputFormat: outputFormat, requestURL: services.bulkExports.publicURL + "/v1/fhir/$export" + query)
        return try await services.bulkExports.kickOff(kickOff, by: principal, logger: logger)
    }

    func fhirBulkExportStatus(_ input: Operations.FhirBulkExportStatus.Input) async throws -> Operations.FhirBulkExportStatus.Output {
        let export = try await services.bulkExports.export(id: input.path.id, by: try await caller(), logger: logger)
        guard export.status == .complete else {
            return .accepted(.init(headers: .init(xProgress: "planning \(export.planned) of \(export.total) requests", retryAfter: 2)))
        }
        let output = export.files.map {
            Components.Schemas.BulkExportFile(_type: "Observation", url: services.bulkExports.fileURL(export.id, n: $0.n), count: $0.count)
        }
        return .ok(
            .init(
                body: .json(
                    .init(transactionTime: export.transactionTime, request: export.requestURL, requiresAccessToken: true, output: output, error: [])))
        )
    }

    func fhirBulkExportDelete(_ input: Operations.FhirBulkExportDelete.Input) async throws -> Operations.FhirBulkExportDelete.Output {
        try await services.bulkExports.delete(id: input.path.id, by: try await caller(), logger: logger)
        return .accepted(.init())
    }

    /// Never reached: `StreamingEndpoints` serves the files so they stream. Kept because the generated protocol requires it.
    func fhirBulkExportFile(_ input: Operations.FhirBulkExportFile.Input) async throws -> Operations.FhirBulkExportFile.Output {
        throw Problem.status(.internalServerError, detail: "Downloads are served by the streaming endpoint.")
    }
}
