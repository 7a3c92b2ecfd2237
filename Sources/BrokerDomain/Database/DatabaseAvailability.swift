import Foundation
import Synchronization

/// Whether the database answers, as the `DatabaseWatchdog` last saw it, and a way for requests to learn
/// the moment it stops answering.
///
/// PostgresNIO's pool queues a request for a connection until its circuit breaker trips, which took about
/// a minute in the database-restart fault test: clients hung, then got a 500. With this, requests that
/// arrive while the database is down answer 503 at once (`DatabaseAvailabilityMiddleware`), and requests
/// already under way are cut short within a probe interval (`OutageGuard`).
package final class DatabaseAvailability: Sendable {
    private struct State {
        var reachable = true
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    package var isReachable: Bool { state.withLock { $0.reachable } }

    func markReachable() { state.withLock { $0.reachable = true } }

    func markUnreachable() {
        let waiters = state.withLock { state in
            state.reachable = false
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when the database is (or becomes) unreachable, or when the calling task is cancelled.
    package func waitUntilUnreachable() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.reachable || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
