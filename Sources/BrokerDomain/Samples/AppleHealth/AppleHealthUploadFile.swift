#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An uploaded file on disk, read at explicit offsets (pread), so that readers never share a file position.
final class AppleHealthUploadFile {
    private let descriptor: Int32
    let size: UInt64
    private var closed = false

    init(_ path: String) throws(AppleHealthImportError) {
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw .unreadable("cannot open the upload (errno \(errno))") }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let error = errno
            close(descriptor)
            throw .unreadable("cannot stat the upload (errno \(error))")
        }
        size = UInt64(info.st_size)
    }

    deinit { closeFile() }

    func closeFile() {
        if !closed {
            closed = true
            close(descriptor)
        }
    }

    /// Exactly `count` bytes at `offset`; fewer available is a truncated file.
    func read(at offset: UInt64, count: Int) throws(AppleHealthImportError) -> [UInt8] {
        guard offset + UInt64(count) <= size else { throw .damagedZip("it ends early") }
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withUnsafeMutableBufferPointer { (buffer) throws(AppleHealthImportError) in
            try read(at: offset, into: buffer)
        }
        return bytes
    }

    func read(at offset: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) throws(AppleHealthImportError) {
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw n == 0 ? .damagedZip("it ends early") : .unreadable("cannot read the upload (errno \(errno))")
            }
            done += n
        }
    }

    /// Up to `buffer.count` bytes at `offset` (fewer only at the end of the file).
    func readSome(at offset: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>) throws(AppleHealthImportError) -> Int {
        while true {
            let n = pread(descriptor, buffer.baseAddress!, buffer.count, off_t(offset))
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .unreadable("cannot read the upload (errno \(errno))") }
            return n
        }
    }
}
