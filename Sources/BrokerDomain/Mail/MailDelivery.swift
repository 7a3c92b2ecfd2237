import Foundation
import Logging
import PostgresNIO
import PostgresStatements
import ServiceLifecycle
import Synchronization

/// The mail delivery loop, run by every server instance: claims due mails from the outbox (a short
/// transaction of its own), sends them with no database connection held, and records each outcome.
/// Every wait is bounded (`sendTimeout`); a failed attempt is retried with backoff until `maxAttempts`,
/// then the mail is dead: logged, and counted in `/metrics`. State lives only in the database, so any
/// instance picks up what a stopped or crashed one left (at least once: with the same Message-ID).
package struct MailDelivery: Service {
    let client: DatabasePool
    let mailer: any Mailer
    let configuration: MailDeliveryConfiguration
    let logger: Logger

    package init(client: DatabasePool, mailer: any Mailer, configuration: MailDeliveryConfiguration, logger: Logger) {
        self.client = client
        self.mailer = mailer
        self.configuration = configuration
        self.logger = logger
    }

    package func run() async throws {
        await repeatUntilShutdown(every: configuration.pollInterval, logger: logger, failure: "delivering mail failed") {
            try await deliverBatch()
        }
    }

    /// Sends one batch; true when the batch was full (more may be due at once).
    @discardableResult
    package func deliverBatch() async throws -> Bool {
        let limit = configuration.maxInFlight
        let claimed = try await client.withConnection { connection in
            // A mail whose attempts ran out without a record (its sender crashed each time) is dead here.
            try await MailOutboxStore.buryExhausted(maxAttempts: configuration.maxAttempts, on: connection, logger: logger)
            return try await MailOutboxStore.claim(
                limit: limit, maxAttempts: configuration.maxAttempts, lease: configuration.lease, on: connection, logger: logger)
        }
        guard !claimed.isEmpty else { return false }
        let outcomes = await withTaskGroup(of: (MailOutboxStore.Claimed, Failure?).self) { group in
            for mail in claimed {
                group.addTask { (mail, await send(mail)) }
            }
            var outcomes: [(MailOutboxStore.Claimed, Failure?)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        // Recorded in a task of its own: a shutdown cancels the loop while mails are in flight, and a
        // cancelled task gets no connection, yet a mail that went out must be marked sent, or it goes out
        // again when its lease ends. One failed record does not stop the others (the lease covers it).
        let recorded = await Task { [self] in
            var failures = 0
            for (mail, failure) in outcomes {
                do { try await record(mail, failure: failure) } catch {
                    failures += 1
                    logger.warning("recording a mail attempt failed", metadata: ["mail.id": "\(mail.id)", "error": "\(String(reflecting: error))"])
                }
            }
            return failures
        }.value
        return claimed.count == limit && recorded == 0
    }

    /// Why an attempt failed, for its record (never the recipient or the body), and whether trying again
    /// can help.
    struct Failure: Sendable {
        var reason: String
        var permanent = false
    }

    /// Nil when sent, or why not. The wait is bounded here whatever the transport does: a send that
    /// outlives `sendTimeout` is left to finish on its own (the transports bound their own waits too).
    private func send(_ claimed: MailOutboxStore.Claimed) async -> Failure? {
        let outcome = FirstOutcome<Failure?>()
        let timer = TimerSlot()
        let (mailer, mail, timeout) = (self.mailer, claimed.mail, configuration.sendTimeout)
        do {
            // The continuation is installed before either task starts, so a send that finishes at once is
            // not lost; whichever of the send and the timer ends first answers, and the send stops the timer.
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Failure?, any Error>) in
                outcome.install(continuation)
                let sending = Task {
                    do {
                        try await mailer.send(mail)
                        outcome.resume(with: .success(nil))
                    } catch {
                        outcome.resume(with: .success(Self.describe(error)))
                    }
                    timer.cancel()
                }
                timer.start {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    outcome.resume(with: .success(Failure(reason: "no answer from the mail transport within \(Int(timeout.inSeconds)) s")))
                    sending.cancel()
                }
            }
        } catch {
            return Failure(reason: "the attempt was cancelled")
        }
    }

    /// The timer of one send, which the send cancels when it ends first.
    private final class TimerSlot: Sendable {
        /// The timer, once started; `cancelled` when the send ended before it was.
        private let state = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

        func start(_ body: @escaping @Sendable () async -> Void) {
            let task = Task { await body() }
            let alreadyDone = state.withLock { state in
                state.task = task
                return state.cancelled
            }
            if alreadyDone { task.cancel() }
        }

        func cancel() {
            state.withLock { state in
                state.cancelled = true
                return state.task
            }?.cancel()
        }
    }

    private func record(_ claimed: MailOutboxStore.Claimed, failure: Failure?) async throws {
        let metadata: Logger.Metadata = ["mail.id": "\(claimed.id)", "mail.kind": "\(claimed.kind)", "mail.attempt": "\(claimed.attempt)"]
        try await client.withConnection { connection in
            guard let failure else {
                logger.debug("mail sent", metadata: metadata)
                return try await MailOutboxStore.markSent(id: claimed.id, attempt: claimed.attempt, on: connection, logger: logger)
            }
            let dead = claimed.attempt >= configuration.maxAttempts || failure.permanent
            if dead {
                // An operator's matter: the mail will not be sent without them (`/metrics` counts these).
                logger.warning("mail dead-lettered", metadata: metadata.merging(["error": "\(failure.reason)"]) { $1 })
            } else {
                logger.info("mail attempt failed; retried later", metadata: metadata.merging(["error": "\(failure.reason)"]) { $1 })
            }
            try await MailOutboxStore.markFailed(
                id: claimed.id, attempt: claimed.attempt, error: failure.reason, retryDelay: configuration.retryDelay(afterAttempt: claimed.attempt),
                dead: dead,
                on: connection, logger: logger)
        }
    }

    /// A transport's error as an attempt's failure.
    static func describe(_ error: any Error) -> Failure {
        guard let delivery = error as? MailDeliveryError else { return Failure(reason: String(describing: type(of: error))) }
        // Only a refusal of this mail (its recipient, its address) fails the same way every time. A refused
        // password, a certificate, a missing program are the transport's: every mail would die at its first
        // attempt until an operator fixes it, so those are retried like any outage.
        let permanent = delivery.permanent && [.rejected, .address].contains(delivery.kind)
        return Failure(reason: (permanent ? "permanent: " : "") + "\(delivery.kind.rawValue): " + delivery.description, permanent: permanent)
    }
}
