import Foundation

/// The tuning of the webhook delivery loop; the defaults are production's, tests shorten them.
package struct WebhookDeliveryConfiguration: Sendable {
    /// How often a loop claims due events when nothing else makes it (a full claim, a finished post or record).
    package var pollInterval: Duration = .seconds(1)
    /// How often a loop that holds no events looks for the latest time an event became due, between its
    /// `pollInterval` claims: one step along an index, where a claim is a transaction planned afresh. An event queued while
    /// the loop is idle goes out within this rather than within `pollInterval` (the webhook benchmark: its
    /// burst waited 0.1–0.8 s for the loop's next claim). Not shorter than `pollInterval` means no look.
    package var idleProbeInterval: Duration = .milliseconds(100)
    /// How long a verdict on a receiver's URL (public addresses only, `WebhookURLPolicy`) holds before a post
    /// resolves its host again. A post on a kept-alive connection does not resolve it at all; this bounds how
    /// long after a host comes to resolve to a private address a new connection may still be made to it.
    package var urlRecheck: Duration = .seconds(1)
    /// How long a claimed event is left to its instance; must exceed `requestTimeout` by a safe margin,
    /// or a slow delivery could be claimed (and sent) a second time by another instance.
    package var lease: Duration = .seconds(60)
    package var connectTimeout: Duration = .seconds(5)
    /// The whole request: connect, send, response head and body.
    package var requestTimeout: Duration = .seconds(10)
    /// Posts in flight at once on one instance.
    package var maxInFlight = 32
    /// Posts in flight at once to one third party, so a slow or hanging receiver holds only this many
    /// of the `maxInFlight` slots and everyone else's deliveries go on.
    package var maxInFlightPerThirdParty = 8
    /// Finished attempts are recorded together, one statement for up to this many; a batch is written
    /// once `recordDelay` has passed since its first attempt finished (or since the previous batch's write
    /// returned, if it finished during that write), or at once when it is full.
    package var recordBatch = 256
    /// How long a finished attempt may wait for others to be recorded with. A recorded outcome is what
    /// releases the next event of the same request, so this is also the most it delays that event.
    package var recordDelay: Duration = .milliseconds(5)
    /// How long a batch's record waits for a pool connection. Longer than a request's wait: the posts were
    /// already answered, and an outcome not recorded means its event is posted again after its lease. A
    /// record that fails anyway (no connection in time, the database away) is kept and written again
    /// after `pollInterval`, as long as the loop runs.
    package var recordWait: Duration = .seconds(20)
    /// On graceful shutdown, how long posts in flight may still take; those still running then are cut
    /// short (recorded as failed attempts, posted again later), so that recording keeps its own time.
    package var shutdownPostWait: Duration = .seconds(5)
    /// On graceful shutdown, how long recording the last outcomes may take once the posts have stopped.
    /// `shutdownPostWait + shutdownRecordWait` stays inside `d4h serve`'s graceful deadline (10 s), after
    /// which the loop would be cancelled and its unrecorded outcomes lost to a second post.
    package var shutdownRecordWait: Duration = .seconds(3)
    /// The first retry's delay; each further retry doubles it up to `backoffCap`, then ±25 % jitter applies.
    package var backoffBase: Duration = .seconds(10)
    package var backoffCap: Duration = .seconds(60 * 60)
    /// How long after its creation an event is retried before it is marked failed.
    package var retryHorizon: Duration = .seconds(24 * 60 * 60)

    package init() {}

    /// The time a claimed event's lease must still have when its post starts, beyond the post's own
    /// timeout: for recording the outcome before another instance may claim the event.
    package var leaseMargin: Duration { max(.zero, min(.seconds(5), (lease - requestTimeout) / 2)) }

    /// How many rounds of posts are claimed ahead: each third party's claimed events (in flight and
    /// waiting) are at most `maxInFlightPerThirdParty × claimDepth`, and the instance's
    /// `maxInFlight × claimDepth`. Deeper claims mean fewer claim transactions per event; the depth is
    /// bounded so that the last of a party's waiting events still starts its post within its lease even
    /// if every post before it runs to the timeout (a post that could not finish within the lease is
    /// not started: its event is left to be claimed again).
    package var claimDepth: Int {
        guard requestTimeout > .zero else { return 1 }
        return max(1, Int(((lease - leaseMargin) / requestTimeout).rounded(.down)))
    }

    /// The least time between two claims while the instance holds claimed events. Each claim costs the
    /// database a few milliseconds (it reads several candidates per event it may take); without a spacing a
    /// busy loop claimed after every record, about 300 times a second for one fast receiver (a profile:
    /// most of PostgreSQL's time). An idle loop claims at once.
    package var claimInterval: Duration = .milliseconds(25)

    /// A post answered with a 2xx within this is fast. A third party whose last
    /// `maxInFlightPerThirdParty` posts were all fast is claimed `fastClaimDepth` rounds ahead instead of
    /// `claimDepth`; one post that is slower (finished or still running) or fails puts it back, and what
    /// it holds beyond the shallow depth is given back at once.
    package var fastPost: Duration = .seconds(1)

    /// The claim depth of a fast party: as long as each post takes at most `fastPost`, the last of its
    /// waiting events still starts within its lease, as `claimDepth` guarantees for posts that run to the
    /// timeout. With the defaults, 45 rounds (360 events) instead of 5 (40): a claim's round trip then
    /// bounds a fast receiver's pace far less. Capped, so a long lease does not lease thousands.
    package var fastClaimDepth: Int {
        guard fastPost > .zero else { return claimDepth }
        let rounds = Int(((lease - requestTimeout - leaseMargin) / fastPost).rounded(.down))
        return max(claimDepth, min(Self.maxClaimDepth, rounds))
    }

    /// The deepest a claim goes for any party, in rounds of posts.
    static let maxClaimDepth = 50

    /// The delay before the next attempt after `attempt` (1-based) failed: exponential, capped, and
    /// jittered so receivers coming back from an outage are not hit by every sender at the same second.
    package func retryDelay(afterAttempt attempt: Int, jitter: Double = Double.random(in: -0.25...0.25)) -> Duration {
        let base = backoffBase.inSeconds
        let exponential = base * pow(2, Double(min(max(attempt - 1, 0), 40)))
        return .seconds(min(exponential, backoffCap.inSeconds) * (1 + jitter))
    }
}

extension Duration {
    /// The duration in seconds, as a Double (for SQL intervals and arithmetic).
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
