import Foundation

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
