import Foundation

/// Why AutomatedSOS could not be enabled.
public enum SOSEnablementError: Error, Equatable, Sendable {
    case noUserAccount
    case emergencyCallPermissionMissing
}
