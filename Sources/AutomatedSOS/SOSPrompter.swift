import Foundation

/// Shows the prompt and waits for the person's answer. The responder cancels the wait when the countdown
/// ends, so an implementation must return (or throw) promptly on cancellation and then hide the prompt.
public protocol SOSPrompter: Sendable {
    func ask(_ alert: SOSAlert, deadline: Date) async throws -> SOSAnswer
}
