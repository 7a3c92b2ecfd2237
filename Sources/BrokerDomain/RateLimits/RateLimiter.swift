import Foundation
import Synchronization

/// Token buckets per (account, operation) that keep one account from monopolising the expensive endpoints.
///
/// Held in this server instance's memory: each instance limits on its own, so behind a load balancer an
/// account can get up to (instances × limit). That is the trade for no database round trip on every upload;
/// the login throttle, which guards passwords and must hold across instances, lives in the database instead.
/// Keyed by account id, so an API key and a session of the same company draw on one budget.
package final class RateLimiter: Sendable {
    private let limits: RateLimits
    private let state = Mutex(State())

    private struct Key: Hashable {
        var account: UUID
        var operation: RateLimitedOperation
    }

    private struct State {
        var buckets: [Key: TokenBucket] = [:]
        var lastSweep: ContinuousClock.Instant?
    }

    /// How often idle (full) buckets are dropped; sweeping is O(buckets), so not on every request.
    static let sweepInterval: Duration = .seconds(60)

    package init(limits: RateLimits) {
        self.limits = limits
    }

    /// Charges `principal` one request of `operation`, or throws `RateLimitExceeded` (429) when the budget is
    /// spent. Unlimited operations and callers of a role the operation is not for are never charged.
    package func admit(_ principal: Principal, to operation: RateLimitedOperation) throws(RateLimitExceeded) {
        guard let limit = limits[operation], operation.chargedRoles.contains(principal.role) else { return }
        let now = limits.now()
        let maximum = max(1, limits.maximumBuckets)
        let key = Key(account: principal.accountID, operation: operation)
        let wait: Duration? = state.withLock { state in
            if state.buckets[key] == nil { Self.makeRoom(in: &state, now: now, maximum: maximum) }
            var bucket = state.buckets[key] ?? TokenBucket(limit: limit, now: now)
            let wait = bucket.take(now: now)
            state.buckets[key] = bucket
            return wait
        }
        if let wait { throw RateLimitExceeded(operation: operation, limit: limit, wait: wait) }
    }

    /// The buckets held now (for tests of the memory bound).
    var bucketCount: Int { state.withLock { $0.buckets.count } }

    /// Before a new bucket is added: drops the full ones once a sweep interval has passed or the map is at
    /// its cap; if it is still at the cap (that many accounts busy at once), drops an arbitrary quarter of the
    /// buckets, so the next sweeps are far apart. Forgetting a bucket only ever errs towards admitting: its
    /// account starts again with a full bucket.
    private static func makeRoom(in state: inout State, now: ContinuousClock.Instant, maximum: Int) {
        let sweepDue = state.lastSweep.map { now - $0 >= sweepInterval } ?? true
        guard sweepDue || state.buckets.count >= maximum else { return }
        state.lastSweep = now
        state.buckets = state.buckets.filter { !$0.value.isFull(at: now) }
        if state.buckets.count >= maximum {
            let keep = state.buckets.prefix(maximum - max(1, maximum / 4))
            state.buckets = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
