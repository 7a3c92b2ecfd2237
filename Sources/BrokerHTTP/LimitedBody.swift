import Hummingbird
import NIOCore

struct LimitedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let maxBytes: Int
    let pace: BodyPace

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let maxBytes: Int
        let pace: BodyPace
        var seen = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else { return nil }
            seen += buffer.readableBytes
            if seen > maxBytes { throw BodyTooLarge(maxBytes: maxBytes) }
            if !pace.allows(seen) { throw BodyTooSlow() }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), maxBytes: maxBytes, pace: pace)
    }
}
