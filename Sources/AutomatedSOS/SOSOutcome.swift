import Foundation

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
