import Foundation

/// The tuning of the mail delivery loop; the defaults are production's, tests shorten them.
package struct MailDeliveryConfiguration: Sendable {
    /// How often an idle loop looks for due mails.
    package var pollInterval: Duration = .seconds(1)
    /// Mails sent at once by one instance: a hung mail program holds one of these, not the loop.
    package var maxInFlight = 8
    /// The longest the loop waits for one send, whatever the transport's own bound: past it the attempt
    /// counts as failed and is retried (the transport kills a hung mail program within its own bound).
    package var sendTimeout: Duration = .seconds(30)
    /// How long a claimed mail is left to its instance; longer than `sendTimeout`, or a slow send could be
    /// claimed (and sent) a second time by another instance.
    package var lease: Duration = .seconds(90)
    /// The first retry's delay; each further retry doubles it up to `backoffCap`, ±25 % jitter.
    package var backoffBase: Duration = .seconds(30)
    package var backoffCap: Duration = .seconds(60 * 60)
    /// Attempts before a mail is given up (`dead`, counted in `/metrics` and logged): with the defaults
    /// about nine hours of retries.
    package var maxAttempts = 12
    /// Sent and dead mails are forgotten after this many days.
    package var retentionDays = 30

    package init() {}

    /// The delay before the next attempt after `attempt` (1-based) failed.
    package func retryDelay(afterAttempt attempt: Int, jitter: Double = Double.random(in: -0.25...0.25)) -> Duration {
        let exponential = backoffBase.inSeconds * pow(2, Double(min(max(attempt - 1, 0), 40)))
        return .seconds(min(exponential, backoffCap.inSeconds) * (1 + jitter))
    }
}
