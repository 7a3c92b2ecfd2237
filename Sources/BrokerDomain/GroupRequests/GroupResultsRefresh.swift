import Logging
import ServiceLifecycle

/// Looks at each live group subscription once per `interval` and releases the buckets that have closed
/// since its last release (`GroupRequestService.releaseClosedBuckets`: each bucket once, through the
/// privacy module, debited from the budget), queueing `group_request.results_updated`, so the sender
/// learns of them without polling. It is the only thing that releases a subscription's later buckets:
/// reading the results changes nothing.
///
/// Cost: nothing when no bucket has closed; otherwise one type's cells per new bucket, spread over every
/// instance by `FOR UPDATE SKIP LOCKED`.
package struct GroupResultsRefresh: Service {
    package init(groupRequests: GroupRequestService, interval: Duration?, logger: Logger) {
        self.groupRequests = groupRequests
        self.interval = interval
        self.logger = logger
    }

    let groupRequests: GroupRequestService
    /// `GROUP_RESULTS_REFRESH_INTERVAL`; nil turns the loop off.
    let interval: Duration?
    let logger: Logger

    package func run() async throws {
        // Off: wait for shutdown all the same, since a service that returns ends the whole server.
        guard let interval else { return try await gracefulShutdown() }
        let groupRequests = groupRequests
        let logger = logger
        // Look for due subscriptions often enough that none waits much longer than `interval`.
        await repeatUntilShutdown(every: min(interval, .seconds(60)), logger: logger, failure: "refreshing group subscriptions failed; will retry") {
            try await groupRequests.refreshNextDueSubscription(interval: interval, logger: logger)
        }
    }
}
