import Foundation

/// The entries of a trace as an `AsyncSequence`, read as they arrive (see `SOSTraceReader`).
///
/// Each `next()` blocks its thread in `read(2)` until a line arrives; fine for the one reader of a replay,
/// which has nothing else to do meanwhile.
public struct SOSTraceEntries: AsyncSequence {
    public typealias Element = SOSTraceEntry
    private let handle: FileHandle
    private let bufferSize: Int

    public init(handle: FileHandle, bufferSize: Int = 64 * 1024) {
        self.handle = handle
        self.bufferSize = bufferSize
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var reader: SOSTraceReader
        public mutating func next() async throws -> SOSTraceEntry? { try reader.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: SOSTraceReader(handle: handle, bufferSize: bufferSize)) }
}
