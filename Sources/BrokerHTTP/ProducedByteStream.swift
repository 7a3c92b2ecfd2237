import AsyncAlgorithms
import BrokerDomain
import OpenAPIRuntime
import Synchronization

/// A response body written by a producer task, with back-pressure: the producer's `send` waits until the
/// previous chunk was taken by the socket writer, so memory holds about one chunk whatever the size.
/// The producer starts on the first read (a HEAD request never starts it) and is cancelled when the
/// reader goes away, e.g. when the client disconnects.
///
/// `send` answers whether the chunk was taken: false once the reader is gone, or when the socket has not
/// taken the chunk within `stallTimeout` (a client that neither reads nor hangs up). The producer then
/// stops, so a stalled client holds nothing for longer than that.
struct ProducedByteStream: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    typealias Send = @Sendable ([UInt8]) async -> Bool
    typealias Producer = @Sendable (_ send: @escaping Send) async throws -> Void

    let produce: Producer
    let stallTimeout: Duration

    init(stallTimeout: Duration, _ produce: @escaping Producer) {
        self.produce = produce
        self.stallTimeout = stallTimeout
    }

    func makeAsyncIterator() -> Iterator { Iterator(produce: produce, stallTimeout: stallTimeout) }

    final class Iterator: AsyncIteratorProtocol {
        private let produce: Producer
        private let stallTimeout: Duration
        private let channel = AsyncThrowingChannel<[UInt8], any Error>()
        private var chunks: AsyncThrowingChannel<[UInt8], any Error>.AsyncIterator
        private var producer: Task<Void, Never>?

        init(produce: @escaping Producer, stallTimeout: Duration) {
            self.produce = produce
            self.stallTimeout = stallTimeout
            self.chunks = channel.makeAsyncIterator()
        }

        func next() async throws -> ArraySlice<UInt8>? {
            if producer == nil {
                let channel = self.channel
                let produce = self.produce
                let stallTimeout = self.stallTimeout
                producer = Task {
                    let stalled = Mutex(false)
                    do {
                        try await produce { chunk in
                            let outcome = await offer(chunk, to: channel, within: stallTimeout)
                            if outcome == .stalled { stalled.withLock { $0 = true } }
                            return outcome == .taken
                        }
                        // A stalled body must not end like a whole one: a CSV has no end marker, and the
                        // client would take the cursor it was given for the whole release.
                        if stalled.withLock({ $0 }) { channel.fail(StreamStalled()) } else { channel.finish() }
                    } catch {
                        channel.fail(error)
                    }
                }
            }
            // The channel answers a cancelled reader with its end: that is no whole body, and a client must
            // not take it for one (the cursor it was given covers the whole release).
            guard let chunk = try await chunks.next() else {
                try Task.checkCancellation()
                return nil
            }
            return chunk[...]
        }

        deinit { producer?.cancel() }
    }

    /// The body for a generated or hand-registered OpenAPI handler.
    var body: HTTPBody { HTTPBody(self, length: .unknown, iterationBehavior: .single) }
}

private enum Offer { case taken, gone, stalled }

/// Offers the chunk to the socket writer until it takes it, the producer is cancelled (the reader is
/// gone), or the stall timeout passes (the channel withdraws an offer whose task is cancelled).
private func offer(_ chunk: [UInt8], to channel: AsyncThrowingChannel<[UInt8], any Error>, within stallTimeout: Duration) async -> Offer {
    await withTaskGroup(of: Offer.self) { group in
        group.addTask {
            await channel.send(chunk)
            return Task.isCancelled ? .gone : .taken
        }
        group.addTask {
            do {
                try await Task.sleep(for: stallTimeout)
                return .stalled
            } catch {
                return .gone
            }
        }
        let first = await group.next() ?? .gone
        group.cancelAll()
        return Task.isCancelled ? .gone : first
    }
}
