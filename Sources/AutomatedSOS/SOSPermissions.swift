import Foundation

/// What the app tells AutomatedSOS about the device: implemented by the app (account state, the OS's
/// permission to place emergency calls), faked in tests.
public protocol SOSPermissions: Sendable {
    /// Whether a Data4Help user account (a person, not a company or an auditor) is signed in.
    var hasUserAccount: Bool { get }
    /// Whether the person has granted the app permission to place emergency calls.
    var canPlaceEmergencyCalls: Bool { get }
}
