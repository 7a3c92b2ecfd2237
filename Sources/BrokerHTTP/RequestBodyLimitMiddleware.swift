import BrokerDomain
import Hummingbird
import NIOCore

/// Refuses bodies over a limit with 413, whether or not the client declared a length: a declared length is
/// checked at once, a streamed body is counted as it arrives. Paths under a prefix of `limits` get that limit.
///
/// It also refuses bodies that trickle in (408): after a grace period a body must keep up an average of
/// `BodyPace.minimumBytesPerSecond`, so a "slow-drip" client cannot hold a request open indefinitely by
/// sending a byte now and then (each byte would reset the connection's idle timeout).
package struct RequestBodyLimitMiddleware: RouterMiddleware {
    package init(defaultLimit: Int, limits: [String: Int]) {
        self.defaultLimit = defaultLimit
        self.limits = limits
    }

    package typealias Context = BrokerRequestContext
    let defaultLimit: Int
    let limits: [String: Int]

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let path = request.uri.path
        let maxBytes = limits.first { path.hasPrefix($0.key) }?.value ?? defaultLimit
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > maxBytes {
            throw BodyTooLarge(maxBytes: maxBytes)
        }
        var request = request
        request.body = RequestBody(asyncSequence: LimitedBody(base: request.body, maxBytes: maxBytes, pace: BodyPace()))
        return try await next(request, context)
    }
}

/// A body exceeded its limit.
package struct BodyTooLarge: Error, ProblemConvertible {
    let maxBytes: Int
    package init(maxBytes: Int) { self.maxBytes = maxBytes }
    package var problem: Problem {
        Problem(
            status: .contentTooLarge, slug: "body-too-large", title: "Request body too large",
            detail: "The body is over the limit of \(maxBytes / (1024 * 1024)) MiB for this endpoint.")
    }
}

/// A body arrived too slowly (see `BodyPace`).
struct BodyTooSlow: Error, ProblemConvertible {
    var problem: Problem {
        var problem = Problem(
            status: .requestTimeout, slug: "body-too-slow", title: "Request body too slow",
            detail: "The body arrived slower than \(BodyPace.minimumBytesPerSecond / 1024) KiB/s after the first \(BodyPace.graceSeconds) seconds.")
        problem.headers[.connection] = "close"
        return problem
    }
}

/// The slowest a request body may arrive: like Apache's `mod_reqtimeout` (`body=…,MinRate=…`). A phone on
/// a poor link sends far faster than 1 KiB/s; a client that cannot is indistinguishable from a slow-drip attack.
struct BodyPace: Sendable {
    static let graceSeconds = 30
    static let minimumBytesPerSecond = 1024
    var started = ContinuousClock.now

    /// Whether `bytes` received by now keep the pace.
    func allows(_ bytes: Int) -> Bool {
        let elapsed = ContinuousClock.now - started
        let late = elapsed - .seconds(Self.graceSeconds)
        guard late > .zero else { return true }
        return Double(bytes) >= Double(Self.minimumBytesPerSecond) * (Double(late.components.seconds) + Double(late.components.attoseconds) / 1e18)
    }
}

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
