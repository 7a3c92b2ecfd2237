import Foundation
import OpenAPIRuntime

/// An upload spooled to a private temporary file, chunk by chunk (never whole in memory).
struct TemporaryUpload {
    let url: URL

    static func write(_ body: HTTPBody) async throws -> TemporaryUpload {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("d4h-upload-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let upload = TemporaryUpload(url: url)
        do {
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            for try await chunk in body {
                try handle.write(contentsOf: chunk)
            }
        } catch {
            upload.remove()
            throw error
        }
        return upload
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
