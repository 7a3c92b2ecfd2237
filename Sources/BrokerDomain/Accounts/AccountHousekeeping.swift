import Logging
import ServiceLifecycle

/// Deletes unactivated accounts past `ACTIVATION_EXPIRY_HOURS` (500 at a time) and forgets login-throttle
/// buckets that have gone quiet, full rate-limit buckets (10,000 at a time), sent or dead mails past their
/// retention, password reset tokens and second-factor challenges long expired. Registration frees an expired
/// holder itself, and a missing bucket is a full one, so nothing waits on this: it keeps the squatted rows and
/// the throttle and rate-limit tables from growing without bound.
package struct AccountHousekeeping: Service {
    package init(accounts: AccountService, rateLimiter: RateLimiter, logger: Logger, interval: Duration = .seconds(600)) {
        self.accounts = accounts
        self.rateLimiter = rateLimiter
        self.logger = logger
        self.interval = interval
    }

    let accounts: AccountService
    let rateLimiter: RateLimiter
    let logger: Logger
    var interval: Duration = .seconds(600)

    package func run() async throws {
        let accounts = accounts
        let rateLimiter = rateLimiter
        let logger = logger
        await repeatUntilShutdown(every: interval, logger: logger, failure: "account housekeeping failed; will retry") {
            try await accounts.throttle.forgetQuietBuckets(logger: logger)
            try await rateLimiter.forgetFullBuckets(logger: logger)
            try await accounts.outbox.pruneSent(logger: logger)
            try await accounts.forgetExpiredPasswordResets(logger: logger)
            try await accounts.forgetExpiredSecondFactorChallenges(logger: logger)
            return try await accounts.sweepUnactivated(logger: logger)
        }
    }
}
