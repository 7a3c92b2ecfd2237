import BrokerDomain
import Configuration

extension RateLimits {
    /// Reads `RATE_LIMIT_*`: a whole number of requests per period, `0` for no limit. Anything else is a
    /// configuration error.
    package init(reader: ConfigReader) throws {
        self.init()
        for operation in RateLimitedOperation.allCases {
            let (variable, period) = Self.setting(for: operation)
            guard let count = try reader.wholeNumber(variable, in: 0...1_000_000, zeroMeans: "no limit") else { continue }
            self[operation] = count == 0 ? nil : RateLimit(capacity: count, period: period)
        }
    }
}
