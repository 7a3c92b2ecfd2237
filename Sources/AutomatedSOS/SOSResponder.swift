import Foundation

/// Turns an alert into a prompt with a countdown and, depending on the answer, a call.
public struct SOSResponder: Sendable {
    public let configuration: SOSResponderConfiguration
    private let clock: any SOSClock
    private let prompter: any SOSPrompter
    private let dialer: any SOSDialer

    public init(configuration: SOSResponderConfiguration = .init(), clock: any SOSClock, prompter: any SOSPrompter, dialer: any SOSDialer) {
        self.configuration = configuration
        self.clock = clock
        self.prompter = prompter
        self.dialer = dialer
    }

    /// Prompts, waits for the answer or the end of the countdown, whichever comes first, and calls if due.
    /// `record` hears every action as it happens (with the clock's time).
    public func respond(to alert: SOSAlert, record: @Sendable (SOSResponderAction, Date) -> Void = { _, _ in }) async -> SOSOutcome {
        let deadline = clock.now.addingTimeInterval(configuration.countdown)
        record(.prompted(deadline: deadline), clock.now)
        let clock = self.clock
        let prompter = self.prompter
        // nil: the countdown ended first. A prompter that fails counts as no answer: the countdown decides.
        let answer: SOSAnswer? = await withTaskGroup(of: SOSAnswer?.self) { group in
            group.addTask {
                do {
                    try await clock.sleep(until: deadline)
                    return nil
                } catch {
                    // Cancelled because the person answered; never the winner.
                    return .dismiss
                }
            }
            group.addTask {
                do { return try await prompter.ask(alert, deadline: deadline) } catch {
                    try? await clock.sleep(until: deadline)
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch answer {
        case .dismiss:
            record(.dismissed, clock.now)
            return .dismissed
        case .confirm:
            record(.confirmed, clock.now)
            return await dial(alert, record: record) ? .calledOnConfirm : .dialFailed
        case nil:
            record(.countdownEnded, clock.now)
            guard configuration.callOnSilence else { return .expired }
            return await dial(alert, record: record) ? .calledOnSilence : .dialFailed
        }
    }

    private func dial(_ alert: SOSAlert, record: @Sendable (SOSResponderAction, Date) -> Void) async -> Bool {
        do {
            try await dialer.dial(for: alert)
            record(.dialed, clock.now)
            return true
        } catch {
            record(.dialFailed(String(describing: error)), clock.now)
            return false
        }
    }
}
