import Foundation

/// The gate in front of AutomatedSOS: only a person with a user account who granted the emergency-call
/// permission can turn it on, and what they chose persists through the store.
public struct SOSEnablement: Sendable {
    private let store: any SOSSettingsStore
    private let permissions: any SOSPermissions

    public init(store: any SOSSettingsStore, permissions: any SOSPermissions) {
        self.store = store
        self.permissions = permissions
    }

    /// The stored settings (disabled with the default policy when nothing is stored).
    public func settings() throws -> SOSSettings { try store.load() ?? SOSSettings() }

    public var isEnabled: Bool { (try? settings().enabled) ?? false }

    /// Turns AutomatedSOS on for a person of `age` with `policy`, or says why it cannot.
    public func enable(age: Int, policy: SOSPolicy = .default) throws {
        guard permissions.hasUserAccount else { throw SOSEnablementError.noUserAccount }
        guard permissions.canPlaceEmergencyCalls else { throw SOSEnablementError.emergencyCallPermissionMissing }
        try store.save(SOSSettings(enabled: true, policy: policy, age: age))
    }

    /// Turns AutomatedSOS off, keeping the chosen policy for the next time.
    public func disable() throws {
        var settings = try settings()
        settings.enabled = false
        try store.save(settings)
    }

    /// A monitor for the stored settings, or nil when AutomatedSOS is off or a permission was withdrawn
    /// since it was enabled (the OS lets a person revoke it at any time).
    public func makeMonitor() throws -> SOSMonitor? {
        let settings = try settings()
        guard settings.enabled, let age = settings.age, permissions.hasUserAccount, permissions.canPlaceEmergencyCalls
        else { return nil }
        return SOSMonitor(policy: settings.policy, age: age)
    }
}
