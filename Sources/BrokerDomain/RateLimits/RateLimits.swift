/// The per-account budgets of the expensive endpoints (`RATE_LIMIT_*`); nil turns one off. The defaults are
/// far above what a phone or a company's integration sends, so only a runaway or abusive client meets them.
package struct RateLimits: Sendable {
    package var uploads: RateLimit? = .perMinute(120)
    package var imports: RateLimit? = .perHour(10)
    package var downloads: RateLimit? = .perMinute(120)
    package var groupRequests: RateLimit? = .perMinute(30)
    package var statistics: RateLimit? = .perMinute(60)
    /// The time the buckets refill by: nil, the database's `now()`, in production; tests set a clock they
    /// move by hand instead of sleeping.
    ///
    /// The buckets are shared by every instance, so the instants they hold must come from a clock every
    /// instance reads alike. A process's monotonic clock (`ContinuousClock`, what the buckets used while they
    /// lived in each instance's memory) means nothing to another process. The instances' wall clocks agree
    /// only as well as NTP keeps them, and one set wrong would hand its callers extra budget (or none).
    /// The database's clock is the one clock they all share, the one the login throttle already decides by,
    /// so production charges at the database's `now()`. A test's clock replaces it as a parameter of the same
    /// statement (`RateLimitStore`), so the SQL that decides is the same either way.
    package var clock: WallClock?

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
