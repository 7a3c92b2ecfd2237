/// Writes a download's rows as bytes, chunk by chunk (`SingleRequestService.streamRelease`).
protocol ReleaseEncoder {
    associatedtype Chunk: ReleasedRows
    var isChunkFull: Bool { get }
    /// Called once per chunk, before its rows: an encoder that writes several rows as one (a blood
    /// pressure panel) finds them here.
    mutating func begin(_ chunk: Chunk)
    /// Writes row `row` of `chunk`; answers how many rows that released: 0 when the row is not one to
    /// release (a code this server does not know) or was written with an earlier row.
    mutating func append(_ chunk: Chunk, row: Int) -> Int
    /// Hands out what was written so far and starts a new chunk.
    mutating func takeChunk() -> [UInt8]
    /// Closes the document.
    mutating func finish(availableTypes: [SampleType], nextCursor: String)
}

extension ReleaseEncoder {
    mutating func begin(_: Chunk) {}
}

extension ReleasedChunk: ReleasedRows {
    var count: Int { codes.count }
}

extension ReleasedSampleEncoder: ReleaseEncoder {
    mutating func append(_ chunk: ReleasedChunk, row: Int) -> Int {
        append(code: chunk.codes[row], micros: chunk.times[row], value: chunk.values[row]) ? 1 : 0
    }
}

extension FHIRObservationEncoder: ReleaseEncoder {
    mutating func begin(_ chunk: ReleasedChunk) {
        begin(codes: chunk.codes, times: chunk.times)
    }

    mutating func append(_ chunk: ReleasedChunk, row: Int) -> Int {
        append(codes: chunk.codes, times: chunk.times, values: chunk.values, row: row)
    }

    mutating func finish(availableTypes _: [SampleType], nextCursor: String) {
        finish(nextCursor: nextCursor)
    }
}
