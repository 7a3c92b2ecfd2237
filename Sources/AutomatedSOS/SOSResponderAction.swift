import Foundation

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
