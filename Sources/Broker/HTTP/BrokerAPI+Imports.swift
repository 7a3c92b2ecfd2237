import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func importAppleHealth(_ input: Operations.ImportAppleHealth.Input) async throws -> Operations.ImportAppleHealth.Output {
        let principal = try await caller(rateLimited: .imports)
        guard principal.role == .user else { throw SampleError.notAUser }
        let (body, format): (HTTPBody, AppleHealthExportReader.Format) = switch input.body {
        case .xml(let body): (body, .xml)
        case .applicationZip(let body): (body, .zip)
        }
        // A zip is read from its end (the central directory), so the upload goes to a temporary file first;
        // an XML file too, so both take the same path. The body limit middleware caps it at 512 MiB.
        let file = try await TemporaryUpload.write(body)
        defer { file.remove() }
        let result = try await imports.run(file: file.url, format: format, userID: principal.accountID, logger: logger)
        return .ok(.init(body: .json(.init(
            accepted: result.accepted, duplicates: result.duplicates,
            skipped: .init(additionalProperties: result.skipped)))))
    }
}
