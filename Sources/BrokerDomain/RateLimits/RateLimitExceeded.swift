/// A request over its account's budget: 429 with `Retry-After` in whole seconds (at least 1).
package struct RateLimitExceeded: Error, Equatable {
    package var operation: RateLimitedOperation
    package var limit: RateLimit
    package var retryAfterSeconds: Int

    init(operation: RateLimitedOperation, limit: RateLimit, wait: Duration) {
        self.operation = operation
        self.limit = limit
        // Rounded up: a client that waits exactly this long is admitted.
        let (seconds, attoseconds) = wait.components
        self.retryAfterSeconds = max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
