import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func importAppleHealth(_ input: Operations.ImportAppleHealth.Input) async throws -> Operations.ImportAppleHealth.Output {
        let principal = try await caller()
        let (body, format): (HTTPBody, AppleHealthExportReader.Format) =
            switch input.body {
            case .xml(let body): (body, .xml)
            case .applicationZip(let body): (body, .zip)
            }
        switch try await budgeted.importAppleHealth(body, format: format, by: principal, logger: logger) {
        case .finished(let result):
            return .ok(.init(body: .json(.init(result))))
        case .started(let job):
            return .accepted(.init(headers: .init(location: Self.importPath(job.id)), body: .json(.init(job))))
        }
    }

    func getImport(_ input: Operations.GetImport.Input) async throws -> Operations.GetImport.Output {
        // A plain read: the import was charged when it was sent.
        let principal = try await caller()
        guard let id = UUID(uuidString: input.path.id) else { throw ImportJobError.notFound }
        let job = try await services.imports.job(id: id, for: principal, logger: logger)
        return .ok(.init(body: .json(.init(job))))
    }

    static func importPath(_ id: UUID) -> String { "/v1/me/imports/\(id.uuidString.lowercased())" }
}

extension Components.Schemas.ImportResult {
    init(_ result: AppleHealthImport.Result) {
        self.init(
            stored: result.stored, alreadyThere: result.alreadyThere, repeatedInFile: result.repeatedInFile,
            skipped: result.skipped.map { .init(reason: $0.reason, identifier: $0.identifier, count: $0.count) },
            invalid: .init(
                count: result.invalid.count,
                examples: result.invalid.examples.map { .init(line: $0.line, identifier: $0.identifier, reason: $0.reason) }),
            timeZone: result.timeZone,
            routes: result.routes.map { .init(files: $0.files, stored: $0.stored, alreadyThere: $0.alreadyThere) })
    }
}

extension Components.Schemas.ImportJob {
    init(_ job: ImportJob) {
        self.init(
            id: job.id.uuidString.lowercased(), status: .init(job.status),
            bytesTotal: job.bytesTotal, bytesRead: job.bytesRead, recordsRead: job.recordsRead, stored: job.stored,
            createdAt: job.createdAt, finishedAt: job.finishedAt, result: job.result.map { .init($0) },
            problem: job.failure.map { .init(_type: $0.type, title: $0.title, status: $0.status, detail: $0.detail) })
    }
}
