import Hummingbird
import NIOCore

/// Refuses bodies over a limit with 413, whether or not the client declared a length: a declared length is
/// checked at once, a streamed body is counted as it arrives. Paths under a prefix of `limits` get that limit.
struct RequestBodyLimitMiddleware: RouterMiddleware {
    typealias Context = BrokerRequestContext
    let defaultLimit: Int
    let limits: [String: Int]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let path = request.uri.path
        let maxBytes = limits.first { path.hasPrefix($0.key) }?.value ?? defaultLimit
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > maxBytes {
            throw BodyTooLarge(maxBytes: maxBytes)
        }
        var request = request
        request.body = RequestBody(asyncSequence: LimitedBody(base: request.body, maxBytes: maxBytes))
        return try await next(request, context)
    }
}

/// A body exceeded its limit.
struct BodyTooLarge: Error, ProblemConvertible {
    let maxBytes: Int
    var problem: Problem {
        Problem(status: .contentTooLarge, slug: "body-too-large", title: "Request body too large",
                detail: "The body is over the limit of \(maxBytes / (1024 * 1024)) MiB for this endpoint.")
    }
}

struct LimitedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let maxBytes: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let maxBytes: Int
        var seen = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let buffer = try await base.next() else { return nil }
            seen += buffer.readableBytes
            if seen > maxBytes { throw BodyTooLarge(maxBytes: maxBytes) }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), maxBytes: maxBytes) }
}
