import Crypto
import Foundation

/// Who may read `/metrics`. Its figures (request rates and latencies per route and status) tell an attacker
/// how the service is used and when it is under strain, so they are served only to a scraper that sends
/// `Authorization: Bearer <METRICS_TOKEN>`; without a configured token the endpoint does not exist (404).
package struct MetricsAccess: Sendable {
    /// SHA-256 of the configured token; nil when metrics are off.
    private let tokenDigest: [UInt8]?

    package init(token: String?) {
        tokenDigest = token.map { Array(SHA256.hash(data: Data($0.utf8))) }
    }

    /// Throws unless `bearer` is the configured token.
    package func admit(bearer: String?) throws {
        guard let expected = tokenDigest else { throw MetricsAccessError.disabled }
        // Digests of equal length, compared in constant time: the token cannot be guessed byte by byte.
        guard let bearer, Self.constantTimeEqual(Array(SHA256.hash(data: Data(bearer.utf8))), expected) else {
            throw MetricsAccessError.wrongToken
        }
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
