/// Writes a download's rows as bytes, chunk by chunk (`SingleRequestService.streamRelease`).
protocol ReleaseEncoder {
    associatedtype Chunk: ReleasedRows
    var isChunkFull: Bool { get }
    /// Writes row `row` of `chunk`; false when it is not one to release (a code this server does not know).
    mutating func append(_ chunk: Chunk, row: Int) -> Bool
    /// Hands out what was written so far and starts a new chunk.
    mutating func takeChunk() -> [UInt8]
    /// Closes the document.
    mutating func finish(availableTypes: [SampleType], nextCursor: String)
}

extension ReleasedChunk: ReleasedRows {
    var count: Int { codes.count }
}

extension ReleasedSampleEncoder: ReleaseEncoder {
    mutating func append(_ chunk: ReleasedChunk, row: Int) -> Bool {
        guard let type = SampleType(code: chunk.codes[row]) else { return false }
        append(type: type, at: chunk.times[row], value: chunk.values[row])
        return true
    }
}
