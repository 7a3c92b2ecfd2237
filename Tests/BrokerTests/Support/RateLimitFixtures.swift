@testable import Broker

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
}
