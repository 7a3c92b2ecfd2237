import Foundation

/// Pipes each mail to `sendmail -t -i` (or the program `MAIL_PROGRAM` names), within a bound.
///
/// A mail program can hang (a full queue, a relay it waits for): after `timeout` it is stopped, with what
/// it started, and the send fails as temporary. Each run blocks a thread of its own while it waits, never
/// one of Swift's cooperative threads or NIO's shared blocking pool, and at most `concurrency` run at once,
/// so hung programs hold at most that many threads and the rest of the server never waits for them; a
/// send that finds every slot taken waits for one, within the same bound.
package struct SendmailMailer: Mailer {
    package let sender: String
    package let executable: String
    package let timeout: Duration
    private let slots: EvaluationSlots
    /// The one queue the slots take turns over (`EvaluationSlots` is fair between keys; here there is one).
    private static let queue = UUID()

    package init(sender: String, executable: String = "/usr/sbin/sendmail", timeout: Duration = .seconds(10), concurrency: Int = 4) {
        self.sender = sender
        self.executable = executable
        self.timeout = timeout
        self.slots = EvaluationSlots(slots: concurrency, timeout: timeout)
    }

    package func send(_ mail: OutgoingMail) async throws {
        try await send(mail, started: { _ in })
    }

    /// The same, handing the program's pid to `started` (tests check that a stopped one is gone).
    func send(_ mail: OutgoingMail, started: @escaping @Sendable (pid_t) -> Void) async throws {
        let message = Array(RFC5322Message.render(mail, from: sender).utf8)
        let (executable, timeout) = (self.executable, self.timeout)
        let outcome: MailProgramRun.Outcome
        do {
            outcome = try await slots.withSlot(for: Self.queue) {
                let deadline = ContinuousClock.now + timeout
                return await withCheckedContinuation { continuation in
                    Thread {
                        continuation.resume(
                            returning: MailProgramRun.run(executable, ["-t", "-i"], input: message, deadline: deadline, started: started))
                    }.start()
                }
            }
        } catch is EvaluationsBusy {
            throw MailDeliveryError(
                .timeout, permanent: false, "no mail program slot came free within \(timeout.components.seconds) s (\(slots.slots) still running)")
        }
        switch outcome {
        case .exited(0):
            return
        case .exited(75):
            throw MailDeliveryError(.mailProgram, permanent: false, "\(executable) exited with status 75 (EX_TEMPFAIL: try again later)")
        case .exited(let status):
            throw MailDeliveryError(.mailProgram, permanent: true, "\(executable) exited with status \(status)")
        case .signalled(let signal):
            throw MailDeliveryError(.mailProgram, permanent: false, "\(executable) was ended by signal \(signal)")
        case .timedOut:
            throw MailDeliveryError(
                .timeout, permanent: false, "\(executable) did not finish within \(timeout.components.seconds) s and was stopped")
        case .couldNotStart(let code):
            throw MailDeliveryError(.mailProgram, permanent: true, "cannot start \(executable): \(String(cString: strerror(code)))")
        case .lost:
            throw MailDeliveryError(.mailProgram, permanent: false, "\(executable) ended, but how is unknown (reaped elsewhere)")
        }
    }
}
