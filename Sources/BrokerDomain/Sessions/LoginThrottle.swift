import Foundation
import Logging
import PostgresNIO

/// Slows password guessing, per account and (at a much higher bar) per client address.
///
/// Every password check — a login, or the `currentPassword` of a profile change or an erasure — first
/// *reserves* its attempt: one statement per bucket counts it and, once the bucket's free attempts are
/// spent, blocks the bucket for a delay that doubles with each further failure up to a cap. Counting before
/// the password is checked is what makes the limit hold under a burst: thirty concurrent guesses queue on
/// the bucket's row, and only the free ones are evaluated. A right password gives its place back.
///
/// The account bucket is keyed on the normalised email, whether or not it names an account, so the
/// throttle answers the same for an unknown email and is not itself an oracle. The address bucket exists
/// only so that one address cannot guess across many accounts unhindered; its bar is far above what the
/// users behind one NAT or proxy mistype, so it cannot be used to lock them all out.
/// Kept in the database, so the limits hold across server instances.
package struct LoginThrottle: Sendable {
    package let client: DatabasePool
    package var settings: Settings

    /// One bucket's rule: `freeFailures` attempts within `windowSeconds`, then a block of `firstDelaySeconds`
    /// that doubles with each further failure up to `maximumDelaySeconds`. A bucket starts afresh once it has
    /// been quiet (not blocked, no new window) for `windowSeconds`.
    package struct Policy: Sendable, Equatable {
        package var freeFailures: Int
        package var firstDelaySeconds: Int
        package var maximumDelaySeconds: Int
        package var windowSeconds = 15 * 60

        package init(freeFailures: Int, firstDelaySeconds: Int, maximumDelaySeconds: Int, windowSeconds: Int = 15 * 60) {
            (self.freeFailures, self.firstDelaySeconds, self.maximumDelaySeconds, self.windowSeconds) =
                (freeFailures, firstDelaySeconds, maximumDelaySeconds, windowSeconds)
        }
    }

    /// `LOGIN_ACCOUNT_FREE_ATTEMPTS` (5) and `LOGIN_ADDRESS_MAX_FAILURES` (100).
    package struct Settings: Sendable, Equatable {
        /// Five free failures, then 1 min, 2, 4, 8, and 15 min per further failure.
        package var account = Policy(freeFailures: 5, firstDelaySeconds: 60, maximumDelaySeconds: 15 * 60)
        /// A hundred failures in 15 minutes from one address, then 15 minutes' block.
        package var address = Policy(freeFailures: 100, firstDelaySeconds: 15 * 60, maximumDelaySeconds: 15 * 60)
        package init() {}
    }

    /// An attempt allowed to check a password; give it back with `forgive` when the password was right.
    package struct Reservation: Sendable {
        let accountBucket: String
        let addressBucket: String
    }

    package init(client: DatabasePool, settings: Settings = Settings()) {
        self.client = client
        self.settings = settings
    }

    /// Counts one attempt for `email` from `clientAddress`, or throws `AccountError.tooManyAttempts` (and
    /// counts nothing) when either bucket is blocked: a refused attempt does not extend the block.
    package func reserve(email: String, clientAddress: String, logger: Logger) async throws -> Reservation {
        try await reserve(accountBucket: "account:" + email, clientAddress: clientAddress, logger: logger)
    }

    /// Counts one second-factor code (or recovery code) for the account, as `reserve(email:)` counts a
    /// password: under the account's policy, in a bucket of its own (a right password, which forgives the
    /// password's bucket, must not forgive wrong codes), and in the client address's bucket that passwords
    /// share.
    package func reserve(secondFactorOf accountID: UUID, clientAddress: String, logger: Logger) async throws -> Reservation {
        try await reserve(accountBucket: "second-factor:" + accountID.uuidString.lowercased(), clientAddress: clientAddress, logger: logger)
    }

    private func reserve(accountBucket: String, clientAddress: String, logger: Logger) async throws -> Reservation {
        let addressBlock = IPAddress(clientAddress)?.clientBlock ?? clientAddress
        let reservation = Reservation(accountBucket: accountBucket, addressBucket: "address:" + addressBlock)
        do {
            try await client.withTransaction(logger: logger) { connection in
                // Always the address first, then the account: every attempt locks in the same order, so
                // concurrent attempts queue rather than deadlock. The account's refusal rolls the address's
                // count back with it.
                for (bucket, policy) in [(reservation.addressBucket, settings.address), (reservation.accountBucket, settings.account)] {
                    if let seconds = try await LoginThrottleStore.count(bucket, policy: policy, on: connection, logger: logger) {
                        throw AccountError.tooManyAttempts(retryAfterSeconds: seconds)
                    }
                }
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
        return reservation
    }

    /// A right password: the account's failures are forgiven, and the address gets its attempt back (not its
    /// earlier failures: one address may try many accounts). Should that attempt have been the one that
    /// reached the address's bar, the block it set goes too: below the bar, no block can be older (a count
    /// restarts only after a block is over).
    package func forgive(_ reservation: Reservation, logger: Logger) async throws {
        try await client.withConnection {
            try await LoginThrottleStore.forgive(
                accountBucket: reservation.accountBucket, addressBucket: reservation.addressBucket,
                addressFreeFailures: settings.address.freeFailures, on: $0, logger: logger)
        }
    }

    /// Forgets buckets that have been quiet for their window (the background housekeeping calls this).
    @discardableResult
    package func forgetQuietBuckets(logger: Logger) async throws -> Int {
        let window = max(settings.account.windowSeconds, settings.address.windowSeconds)
        return try await client.withConnection { try await LoginThrottleStore.forgetBuckets(quietFor: window, on: $0, logger: logger) }
    }
}
