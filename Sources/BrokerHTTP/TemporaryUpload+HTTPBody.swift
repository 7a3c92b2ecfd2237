import BrokerDomain
import Foundation
import OpenAPIRuntime

extension TemporaryUpload {
    /// Spools `body` to a new private temporary file.
    static func write(_ body: HTTPBody) async throws -> TemporaryUpload {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-upload-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        var size: Int64 = 0
        do {
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            for try await chunk in body {
                try handle.write(contentsOf: chunk)
                size += Int64(chunk.count)
            }
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        return TemporaryUpload(url: url, size: size)
    }
}
