/// One account's budget for one operation: a token bucket of `limit.capacity` tokens that refills one
/// token every `limit.interval`; each admitted request takes a token. Starting full lets a client send its
/// whole burst at once.
///
/// Kept in the equivalent GCRA form (the generic cell rate algorithm): one instant — when the bucket will
/// be full again — instead of a fractional token count and a time. `Duration` arithmetic is exact, so the
/// advertised `Retry-After` is exactly when the next request is admitted, with no floating-point drift.
struct TokenBucket: Sendable {
    let limit: RateLimit
    /// When the bucket is (or will again be) full; never earlier than the last request.
    private var fullAt: ContinuousClock.Instant

    init(limit: RateLimit, now: ContinuousClock.Instant) {
        self.limit = limit
        self.fullAt = now
    }

    /// Takes a token: nil when the request is admitted, otherwise how long until a token is there (and the
    /// bucket is left as it was: a refused request costs nothing).
    mutating func take(now: ContinuousClock.Instant) -> Duration? {
        let start = max(fullAt, now)
        // The bucket holds (capacity − 1) intervals of slack beyond the token this request takes.
        let emptyFrom = start - limit.interval * (limit.capacity - 1)
        if emptyFrom > now { return emptyFrom - now }
        fullAt = start + limit.interval
        return nil
    }

    /// A full bucket is the same as no bucket (a new one starts full), so it can be forgotten.
    func isFull(at now: ContinuousClock.Instant) -> Bool { fullAt <= now }
}
