import Logging
import ServiceLifecycle

/// Announces expired subscriptions (audit event, `subscription.ended` webhook) shortly after `endsAt`.
/// Expiry takes effect without it: every read computes it from time.
struct SubscriptionExpiry: Service {
    let requests: SingleRequestService
    let logger: Logger
    var interval: Duration = .seconds(30)

    func run() async throws {
        let requests = requests
        let logger = logger
        await repeatUntilShutdown(every: interval, logger: logger, failure: "announcing expired subscriptions failed; will retry") {
            try await requests.announceExpiries(logger: logger) > 0
        }
    }
}
