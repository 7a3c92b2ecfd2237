import Foundation

/// The tuning of the webhook delivery loop; the defaults are production's, tests shorten them.
package struct WebhookDeliveryConfiguration: Sendable {
    /// How often an idle loop looks for due events.
    package var pollInterval: Duration = .seconds(1)
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
    /// The first retry's delay; each further retry doubles it up to `backoffCap`, then ±25 % jitter applies.
    package var backoffBase: Duration = .seconds(10)
    package var backoffCap: Duration = .seconds(60 * 60)
    /// How long after its creation an event is retried before it is marked failed.
    package var retryHorizon: Duration = .seconds(24 * 60 * 60)

    package init() {}

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
