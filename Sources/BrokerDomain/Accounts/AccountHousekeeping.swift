import Logging
import ServiceLifecycle

/// Deletes unactivated accounts past `ACTIVATION_EXPIRY_HOURS` (500 at a time) and forgets login-throttle
/// buckets that have gone quiet, sent or dead mails past their retention, password reset tokens and
/// second-factor challenges long expired. Registration frees an expired holder itself, so nothing waits on this: it
/// keeps the squatted rows and the throttle table from growing without bound.
package struct AccountHousekeeping: Service {
    package init(accounts: AccountService, logger: Logger, interval: Duration = .seconds(600)) {
        self.accounts = accounts
        self.logger = logger
        self.interval = interval
    }

    let accounts: AccountService
    let logger: Logger
    var interval: Duration = .seconds(600)

    package func run() async throws {
        let accounts = accounts
        let logger = logger
        await repeatUntilShutdown(every: interval, logger: logger, failure: "account housekeeping failed; will retry") {
            try await accounts.throttle.forgetQuietBuckets(logger: logger)
            try await accounts.outbox.pruneSent(logger: logger)
            try await accounts.forgetExpiredPasswordResets(logger: logger)
            try await accounts.forgetExpiredSecondFactorChallenges(logger: logger)
            return try await accounts.sweepUnactivated(logger: logger)
        }
    }
}
