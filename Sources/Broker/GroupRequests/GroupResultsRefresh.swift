import Logging
import ServiceLifecycle

/// Looks at each live group subscription once per `interval` and, when buckets have closed since its last
/// release (`ReleaseSchedule`), releases them — each bucket once, never recomputing a released one — and
/// queues `group_request.results_updated`, so the sender learns of them without polling. Reading the
/// results releases closed buckets as well; this loop is what makes the webhook worth having.
///
/// Cost: a look at a subscription with nothing closed reads one row; a release computes only the new
/// buckets' cells. Spread over every instance by `FOR UPDATE SKIP LOCKED`.
struct GroupResultsRefresh: Service {
    let groupRequests: GroupRequestService
    /// `GROUP_RESULTS_REFRESH_INTERVAL`; nil turns the loop off.
    let interval: Duration?
    let logger: Logger

    func run() async throws {
        guard let interval else { return }
        let groupRequests = groupRequests, logger = logger
        // Look for due subscriptions often enough that none waits much longer than `interval`.
        await repeatUntilShutdown(every: min(interval, .seconds(60)), logger: logger, failure: "refreshing group subscriptions failed; will retry") {
            try await groupRequests.refreshNextDueSubscription(interval: interval, logger: logger)
        }
    }
}
