import Foundation
import Logging

/// Token buckets per (account, operation) that keep one account from monopolising the expensive endpoints.
///
/// Kept in the database (`rate_limit_buckets`, `RateLimitStore`), so the limits hold across server
/// instances: behind a load balancer an account gets its limit, not (instances × limit). A charge is one
/// statement on a short lease of its own, taken before the operation leases anything (so no connection is
/// waited for while one is held), and bounded like every lease: a pool that stays busy for the lease timeout
/// answers 503 with `Retry-After`. Unlimited operations and roles the operation is not for are decided here
/// and never reach the database. Keyed by account id, so an API key and a session of the same company draw on
/// one budget.
package struct RateLimiter: Sendable {
    let client: DatabasePool
    let limits: RateLimits

    /// The most full buckets one housekeeping pass deletes: one statement's bounded work. The table holds at
    /// most one row per account and operation, so what a pass leaves is deleted by the next ones.
    static let sweepBatch = 10_000

    package init(client: DatabasePool, limits: RateLimits) {
        self.client = client
        self.limits = limits
    }

    /// Charges `principal` one request of `operation`, or throws `RateLimitExceeded` (429) when the budget is
    /// spent. Unlimited operations and callers of a role the operation is not for are never charged.
    package func admit(_ principal: Principal, to operation: RateLimitedOperation, logger: Logger) async throws {
        guard let limit = limits[operation], operation.chargedRoles.contains(principal.role) else { return }
        let instant = limits.clock?.now
        let wait = try await client.withConnection {
            try await RateLimitStore.charge(
                account: principal.accountID, operation: operation, limit: limit, at: instant, on: $0, logger: logger)
        }
        if let wait { throw RateLimitExceeded(operation: operation, limit: limit, wait: .microseconds(wait)) }
    }

    /// Deletes full buckets, at most `batch` of them (the background housekeeping calls this): a full bucket
    /// is the same as none, so the table keeps only the accounts that spent some of their budget lately.
    @discardableResult
    package func forgetFullBuckets(atMost batch: Int = sweepBatch, logger: Logger) async throws -> Int {
        let instant = limits.clock?.now
        return try await client.withConnection {
            try await RateLimitStore.deleteFull(at: instant, limit: batch, on: $0, logger: logger)
        }
    }
}
