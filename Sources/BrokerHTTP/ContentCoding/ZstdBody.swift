import OpenAPIRuntime

/// A response body compressed as one zstd frame while it streams: each chunk the producer sends goes out
/// compressed and flushed (the client reads as far as the producer got), and the frame's end, with its
/// checksum, only once the body ended whole. A body that fails midway ends without it, so the client sees a
/// truncated frame, never a complete shorter one. Memory: the compressor's state (about 1.5 MB at level 1)
/// and one compressed chunk.
struct ZstdBody: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let content: HTTPBody

    func makeAsyncIterator() -> Iterator { Iterator(content.makeAsyncIterator()) }

    final class Iterator: AsyncIteratorProtocol {
        private var content: HTTPBody.AsyncIterator
        private var compressor: ZstdFrameCompressor?
        private var ended = false

        init(_ content: HTTPBody.AsyncIterator) { self.content = content }

        func next() async throws -> ArraySlice<UInt8>? {
            guard !ended else { return nil }
            // Made on the first read, so a response whose body is never read (a HEAD) allocates nothing.
            let compressor = try self.compressor ?? ZstdFrameCompressor()
            self.compressor = compressor
            while let chunk = try await content.next() {
                let compressed = try compressor.compress(chunk)
                if !compressed.isEmpty { return compressed[...] }
            }
            // A body read by a cancelled task (the server stopping mid-download) can end early without an
            // error: it must not be sealed as whole.
            try Task.checkCancellation()
            let end = try compressor.compress([], end: true)
            ended = true
            return end[...]
        }
    }
}
