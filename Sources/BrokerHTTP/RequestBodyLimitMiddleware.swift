import BrokerDomain
import Foundation
import Hummingbird
import NIOCore

/// Refuses bodies over a limit with 413, whether or not the client declared a length: a declared length is
/// checked at once, a streamed body is counted as it arrives. Paths under a prefix of `limits` get that limit;
/// a path of `mediaTypeLimits` gets its limit for bodies of that media type only (a FHIR Bundle upload).
///
/// It also refuses bodies that trickle in (408): after a grace period a body must keep up an average of
/// `BodyPace.minimumBytesPerSecond`, so a "slow-drip" client cannot hold a request open indefinitely by
/// sending a byte now and then (each byte would reset the connection's idle timeout).
package struct RequestBodyLimitMiddleware: RouterMiddleware {
    package init(defaultLimit: Int, limits: [String: Int], mediaTypeLimits: [MediaTypeLimit] = []) {
        self.defaultLimit = defaultLimit
        self.limits = limits
        self.mediaTypeLimits = mediaTypeLimits
    }

    /// A limit for one path (exactly) and one media type (parameters such as `charset` aside).
    package struct MediaTypeLimit: Sendable {
        package var path: String
        package var mediaType: String
        package var limit: Int

        package init(path: String, mediaType: String, limit: Int) {
            self.path = path
            self.mediaType = mediaType
            self.limit = limit
        }
    }

    package typealias Context = BrokerRequestContext
    let defaultLimit: Int
    let limits: [String: Int]
    let mediaTypeLimits: [MediaTypeLimit]

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let path = request.uri.path
        let mediaType = request.headers[.contentType].map {
            $0.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        }
        let maxBytes =
            mediaTypeLimits.first { $0.path == path && $0.mediaType == mediaType }?.limit
            ?? limits.first { path.hasPrefix($0.key) }?.value ?? defaultLimit
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > maxBytes {
            throw BodyTooLarge(maxBytes: maxBytes)
        }
        var request = request
        request.body = RequestBody(asyncSequence: LimitedBody(base: request.body, maxBytes: maxBytes, pace: BodyPace()))
        return try await next(request, context)
    }
}
