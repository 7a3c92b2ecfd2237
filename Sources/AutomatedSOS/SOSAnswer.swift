import Foundation

/// What the person answered to the prompt.
public enum SOSAnswer: String, Sendable, Codable {
    /// "I am fine": no call.
    case dismiss
    /// "Call now": the call is placed at once.
    case confirm
}
