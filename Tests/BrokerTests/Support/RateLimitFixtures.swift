import BrokerTestSupport
import Foundation
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// What the rate-limit suites share: a configuration with only the given limits, on a clock the test moves.
enum RateLimitFixtures {
    /// Limits of `limits` (everything else off) on `clock`.
    static func configure(_ clock: ManualClock, _ limits: [RateLimitedOperation: RateLimit])
        -> @Sendable (inout BrokerConfiguration) -> Void
    {
        { configuration in
            configuration.rateLimits = .unlimited
            for (operation, limit) in limits { configuration.rateLimits[operation] = limit }
            configuration.rateLimits.now = { clock.now }
        }
    }

    /// Checks a 429 as the contract gives it (a problem document, `Retry-After` a whole number of seconds
    /// ≥ 1) and returns the seconds.
    @discardableResult
    static func expectRateLimited(_ response: TestResponse, _ harness: TestHarness, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> Int
    {
        try #require(response.status == .tooManyRequests, "\(response.status): \(harness.text(response))", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        let problem = try harness.object(response)
        #expect(problem["type"] as? String == Problem.typeBase + "rate-limited", sourceLocation: sourceLocation)
        #expect(problem["status"] as? Int == 429, sourceLocation: sourceLocation)
        #expect((problem["detail"] as? String)?.contains("try again in") == true, sourceLocation: sourceLocation)
        let header = try #require(response.headers[.retryAfter], "no Retry-After", sourceLocation: sourceLocation)
        let seconds = try #require(Int(header), "Retry-After: \(header)", sourceLocation: sourceLocation)
        #expect(seconds >= 1, sourceLocation: sourceLocation)
        return seconds
    }
}
