import BrokerDomain
import Foundation
import Logging
import OpenAPIRuntime

extension TemporaryUpload {
    /// Spools `body` to a new private file in `directory`. The upload is refused (`ImportJobError.noSpace`,
    /// logged as an error for the operator) when the disk is full, or before it would leave less than
    /// `reserve(ofFileSystemOf:)` free: the spool often shares its disk with the database and the logs, and one
    /// person's upload must not be what fills it. Whatever was written is removed whenever it fails.
    static func write(_ body: HTTPBody, in directory: URL, logger: Logger) async throws -> TemporaryUpload {
        let url = directory.appendingPathComponent("d4h-upload-\(UUID().uuidString)")
        func refused(written: Int64) -> ImportJobError {
            logger.error(
                "no space left to receive an upload; it was refused with 503",
                metadata: ["directory": "\(directory.path)", "bytes.written": "\(written)"])
            return .noSpace
        }
        guard roomLeft(in: directory) else { throw refused(written: 0) }
        let descriptor = open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if [ENOSPC, EDQUOT].contains(code) { throw refused(written: 0) }
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var size: Int64 = 0
        var checkedAt: Int64 = 0
        do {
            for try await chunk in body {
                try handle.write(contentsOf: chunk)
                size += Int64(chunk.count)
                // The free space again every 8 MiB: a statvfs, nothing beside the writes themselves.
                if size - checkedAt >= 8 << 20 {
                    checkedAt = size
                    guard roomLeft(in: directory) else { throw ImportJobError.noSpace }
                }
            }
            // Some file systems (NFS, quotas) report a full disk only as the file is closed.
            try handle.close()
        } catch {
            try? handle.close()
            try? FileManager.default.removeItem(at: url)
            if error as? ImportJobError == .noSpace || isOutOfSpace(error) { throw refused(written: size) }
            throw error
        }
        return TemporaryUpload(url: url, size: size)
    }

    /// Whether the file system of `directory` has more free than its reserve: 5 % of its size, at most 1 GiB.
    /// True when it cannot be told (the writes' own errors still stop a full disk).
    static func roomLeft(in directory: URL) -> Bool {
        var stats = statvfs()
        guard statvfs(directory.path, &stats) == 0 else { return true }
        let blockSize = UInt64(stats.f_frsize)
        let reserve = min(UInt64(stats.f_blocks) * blockSize / 20, 1 << 30)
        return UInt64(stats.f_bavail) * blockSize > reserve
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
