/// The per-account budgets of the expensive endpoints (`RATE_LIMIT_*`); nil turns one off. The defaults are
/// far above what a phone or a company's integration sends, so only a runaway or abusive client meets them.
package struct RateLimits: Sendable {
    package var uploads: RateLimit? = .perMinute(120)
    package var imports: RateLimit? = .perHour(10)
    package var downloads: RateLimit? = .perMinute(120)
    package var groupRequests: RateLimit? = .perMinute(30)
    package var statistics: RateLimit? = .perMinute(60)
    /// The most buckets held at once (about 100 bytes each), whatever the number of accounts.
    package var maximumBuckets = 100_000
    /// The time the buckets refill by; tests pass a clock they move by hand instead of sleeping.
    package var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

    package init() {}

    package subscript(operation: RateLimitedOperation) -> RateLimit? {
        get {
            switch operation {
            case .uploads: uploads
            case .imports: imports
            case .downloads: downloads
            case .groupRequests: groupRequests
            case .statistics: statistics
            }
        }
        set {
            switch operation {
            case .uploads: uploads = newValue
            case .imports: imports = newValue
            case .downloads: downloads = newValue
            case .groupRequests: groupRequests = newValue
            case .statistics: statistics = newValue
            }
        }
    }

    /// Every limit switched off.
    package static var unlimited: RateLimits {
        var limits = RateLimits()
        for operation in RateLimitedOperation.allCases { limits[operation] = nil }
        return limits
    }

    /// The variable that sets `operation`'s limit, and the period its number counts.
    package static func setting(for operation: RateLimitedOperation) -> (variable: String, period: Duration) {
        switch operation {
        case .uploads: ("RATE_LIMIT_UPLOADS_PER_MINUTE", .seconds(60))
        case .imports: ("RATE_LIMIT_IMPORTS_PER_HOUR", .seconds(3600))
        case .downloads: ("RATE_LIMIT_DOWNLOADS_PER_MINUTE", .seconds(60))
        case .groupRequests: ("RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE", .seconds(60))
        case .statistics: ("RATE_LIMIT_STATISTICS_PER_MINUTE", .seconds(60))
        }
    }

}
