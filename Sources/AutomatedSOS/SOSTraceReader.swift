import Foundation

/// Reads a trace from a file or a pipe line by line, in constant memory: one fixed buffer, each line parsed
/// as soon as its newline arrives and then forgotten. A live feed (`tail -f trace.csv | d4h sos --trace -`)
/// yields each entry as it is written, without waiting for the end of the input.
///
/// It reads with `read(2)`, which returns whatever is there; `FileHandle`'s reads may wait to fill their
/// count, which on a live pipe means waiting for lines that have not been written yet.
public struct SOSTraceReader {
    public enum ReadError: Error, Equatable, CustomStringConvertible {
        /// A line longer than the buffer: no trace line is that long, and growing the buffer would give up
        /// the memory bound.
        case lineTooLong(line: Int, limit: Int)
        case io(errno: Int32)

        public var description: String {
            switch self {
            case .lineTooLong(let line, let limit): "line \(line): longer than \(limit) bytes"
            case .io(let code): "read failed: \(String(cString: strerror(code)))"
            }
        }
    }

    private let handle: FileHandle
    private var parser = SOSTraceLineParser()
    private var buffer: UnsafeMutableBufferPointer<UInt8>
    private let storage: Storage
    /// The unread bytes are `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    private var atEOF = false
    private var finished = false

    /// Owns the buffer, so a copied reader never frees it twice.
    private final class Storage {
        let buffer: UnsafeMutableBufferPointer<UInt8>
        init(capacity: Int) { buffer = .allocate(capacity: capacity) }
        deinit { buffer.deallocate() }
    }

    /// The number of the last line read (1-based), for messages about what came after it.
    public var lineNumber: Int { parser.lineNumber }

    /// Reads from `handle` (a file, standard input, a pipe); a line may be at most `bufferSize` bytes.
    public init(handle: FileHandle, bufferSize: Int = 64 * 1024) {
        self.handle = handle
        storage = Storage(capacity: max(16, bufferSize))
        buffer = storage.buffer
    }

    /// The next entry, nil at the end of the trace. Throws `SOSTrace.ParseError` for a bad line (naming it)
    /// or `ReadError`; after an error the reader is done.
    public mutating func next() throws -> SOSTraceEntry? {
        while !finished {
            if let newline = buffer[start..<end].firstIndex(of: UInt8(ascii: "\n")) {
                let line = UnsafeBufferPointer(rebasing: buffer[start..<newline])
                start = newline + 1
                if let entry = try parsed(line) { return entry }
                continue
            }
            if atEOF {
                finished = true
                // The last line may lack its newline.
                if start < end {
                    let line = UnsafeBufferPointer(rebasing: buffer[start..<end])
                    start = end
                    if let entry = try parsed(line) { return entry }
                }
                try parser.finish()
                return nil
            }
            try fill()
        }
        return nil
    }

    private mutating func parsed(_ line: UnsafeBufferPointer<UInt8>) throws -> SOSTraceEntry? {
        do { return try parser.parse(line: line) } catch {
            finished = true
            throw error
        }
    }

    /// Moves the partial line to the front and reads more after it.
    private mutating func fill() throws {
        if start > 0 {
            let remaining = end - start
            if remaining > 0 { buffer.baseAddress!.update(from: buffer.baseAddress! + start, count: remaining) }
            start = 0
            end = remaining
        }
        guard end < buffer.count else {
            finished = true
            throw ReadError.lineTooLong(line: parser.lineNumber + 1, limit: buffer.count)
        }
        while true {
            let count = read(handle.fileDescriptor, buffer.baseAddress! + end, buffer.count - end)
            if count > 0 {
                end += count
                return
            }
            if count == 0 {
                atEOF = true
                return
            }
            if errno == EINTR { continue }
            finished = true
            throw ReadError.io(errno: errno)
        }
    }
}
