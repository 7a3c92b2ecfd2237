import Foundation
import OpenAPIRuntime

/// An upload spooled to a private temporary file, chunk by chunk (never whole in memory). Whoever holds it
/// removes it; a background import takes it over and removes it when the import ends.
struct TemporaryUpload: Sendable {
    let url: URL
    /// Bytes written.
    let size: Int64

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

    func remove() { try? FileManager.default.removeItem(at: url) }
}
