import BrokerDomain
import Foundation
import Logging
import OpenAPIRuntime

extension TemporaryUpload {
    /// Spools `body` to a new private file in `directory`. A full disk (or quota) is `ImportJobError.noSpace`,
    /// logged as an error for the operator; whatever was written is removed either way.
    static func write(_ body: HTTPBody, in directory: URL, logger: Logger) async throws -> TemporaryUpload {
        let url = directory.appendingPathComponent("d4h-upload-\(UUID().uuidString)")
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
            guard isOutOfSpace(error) else { throw error }
            logger.error(
                "no space left to receive an upload; it was refused with 503",
                metadata: ["directory": "\(directory.path)", "bytes.written": "\(size)"])
            throw ImportJobError.noSpace
        }
        return TemporaryUpload(url: url, size: size)
    }

    /// Whether a write failed for want of room, however Foundation wrapped the errno.
    static func isOutOfSpace(_ error: any Error) -> Bool {
        if let cocoa = error as? CocoaError, cocoa.code == .fileWriteOutOfSpace { return true }
        if let posix = error as? POSIXError, [.ENOSPC, .EDQUOT].contains(posix.code) { return true }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain, [Int(ENOSPC), Int(EDQUOT)].contains(ns.code) { return true }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? any Error { return isOutOfSpace(underlying) }
        return false
    }
}
