import Foundation

/// Places the emergency call: the phone's dialer in the app, a command in `d4h sos`, a fake in tests.
public protocol SOSDialer: Sendable {
    func dial(for alert: SOSAlert) async throws
}

/// What the person answered to the prompt.
public enum SOSAnswer: String, Sendable, Codable {
    /// "I am fine": no call.
    case dismiss
    /// "Call now": the call is placed at once.
    case confirm
}

/// Shows the prompt and waits for the person's answer. The responder cancels the wait when the countdown
/// ends, so an implementation must return (or throw) promptly on cancellation and then hide the prompt.
public protocol SOSPrompter: Sendable {
    func ask(_ alert: SOSAlert, deadline: Date) async throws -> SOSAnswer
}

/// How the responder reacts to an alert.
public struct SOSResponderConfiguration: Sendable, Hashable, Codable {
    /// Seconds the person has to answer.
    public var countdown: TimeInterval
    /// Whether silence until the end of the countdown places the call; false is "prompt only", as the
    /// original app did.
    public var callOnSilence: Bool

    public init(countdown: TimeInterval = 30, callOnSilence: Bool = true) {
        self.countdown = countdown
        self.callOnSilence = callOnSilence
    }
}

/// What the responder did, in order, for logs and for `d4h sos`.
public enum SOSResponderAction: Sendable, Hashable {
    case prompted(deadline: Date)
    case dismissed
    case confirmed
    case countdownEnded
    case dialed
    case dialFailed(String)

    public var name: String {
        switch self {
        case .prompted: "prompted"
        case .dismissed: "dismissed"
        case .confirmed: "confirmed"
        case .countdownEnded: "countdown_ended"
        case .dialed: "dialed"
        case .dialFailed: "dial_failed"
        }
    }
}

/// How a prompt ended.
public enum SOSOutcome: String, Sendable, Codable {
    case dismissed
    /// The person confirmed and the call was placed.
    case calledOnConfirm = "called_on_confirm"
    /// Nobody answered and the call was placed.
    case calledOnSilence = "called_on_silence"
    /// Nobody answered and the configuration is prompt-only.
    case expired
    /// A call was due but the dialer failed.
    case dialFailed = "dial_failed"
}

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
