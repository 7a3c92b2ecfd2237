import Logging
import ServiceLifecycle

/// Announces expired subscriptions (audit event, `subscription.ended` webhook) shortly after `endsAt`, and
/// lapsed pending requests (`single_request.expired`) shortly after `expiresAt`. Both take effect without
/// it: every read computes them from time.
package struct SubscriptionExpiry: Service {
    package init(requests: SingleRequestService, logger: Logger, interval: Duration = .seconds(30)) {
        self.requests = requests
        self.logger = logger
        self.interval = interval
    }

    let requests: SingleRequestService
    let logger: Logger
    var interval: Duration = .seconds(30)

    package func run() async throws {
        let requests = requests
        let logger = logger
        await repeatUntilShutdown(every: interval, logger: logger, failure: "announcing expired subscriptions failed; will retry") {
            let expired = try await requests.announceExpiries(logger: logger)
            let lapsed = try await requests.announceLapses(logger: logger)
            return expired + lapsed > 0
        }
    }
}
