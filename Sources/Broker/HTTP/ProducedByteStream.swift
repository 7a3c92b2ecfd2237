import AsyncAlgorithms
import OpenAPIRuntime

/// A response body written by a producer task, with back-pressure: the producer's `send` waits until the
/// previous chunk was taken by the socket writer, so memory holds about one chunk whatever the size.
/// The producer starts on the first read (a HEAD request never starts it) and is cancelled when the
/// reader goes away, e.g. when the client disconnects.
struct ProducedByteStream: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    typealias Producer = @Sendable (_ send: @escaping @Sendable ([UInt8]) async -> Void) async throws -> Void

    let produce: Producer

    init(_ produce: @escaping Producer) { self.produce = produce }

    func makeAsyncIterator() -> Iterator { Iterator(produce: produce) }

    final class Iterator: AsyncIteratorProtocol {
        private let produce: Producer
        private let channel = AsyncThrowingChannel<[UInt8], any Error>()
        private var chunks: AsyncThrowingChannel<[UInt8], any Error>.AsyncIterator
        private var producer: Task<Void, Never>?

        init(produce: @escaping Producer) {
            self.produce = produce
            self.chunks = channel.makeAsyncIterator()
        }

        func next() async throws -> ArraySlice<UInt8>? {
            if producer == nil {
                let channel = self.channel, produce = self.produce
                producer = Task {
                    do {
                        try await produce { chunk in await channel.send(chunk) }
                        channel.finish()
                    } catch {
                        channel.fail(error)
                    }
                }
            }
            return try await chunks.next().map { $0[...] }
        }

        deinit { producer?.cancel() }
    }

    /// The body for a generated or hand-registered OpenAPI handler.
    var body: HTTPBody { HTTPBody(self, length: .unknown, iterationBehavior: .single) }
}
