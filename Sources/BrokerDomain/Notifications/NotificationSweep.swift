import Logging
import ServiceLifecycle

/// Writes the notifications no single request's transaction can: new requests to their people (a
/// request's creation must look the same whether it reached anyone), subscriptions ending within three
/// days, and the weekly digest. Each step claims a batch with SKIP LOCKED, so instances share the work.
package struct NotificationSweep: Service {
    let requests: SingleRequestService
    let digest: WeeklyDigest
    let logger: Logger
    let interval: Duration

    package init(requests: SingleRequestService, digest: WeeklyDigest, logger: Logger, interval: Duration = .seconds(10)) {
        self.requests = requests
        self.digest = digest
        self.logger = logger
        self.interval = interval
    }

    package func run() async throws {
        let (requests, digest, logger) = (requests, digest, logger)
        await repeatUntilShutdown(every: interval, logger: logger, failure: "writing notifications failed; will retry") {
            let announced = try await requests.announceNewRequests(logger: logger)
            let ending = try await requests.announceEndingSubscriptions(logger: logger)
            let digested = try await digest.writeBatch(logger: logger)
            return announced + ending + digested > 0
        }
    }
}
