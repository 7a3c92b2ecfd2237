import Foundation

/// What the app tells AutomatedSOS about the device: implemented by the app (account state, the OS's
/// permission to place emergency calls), faked in tests.
public protocol SOSPermissions: Sendable {
    /// Whether a Data4Help user account (a person, not a company or an auditor) is signed in.
    var hasUserAccount: Bool { get }
    /// Whether the person has granted the app permission to place emergency calls.
    var canPlaceEmergencyCalls: Bool { get }
}

/// Why AutomatedSOS could not be enabled.
public enum SOSEnablementError: Error, Equatable, Sendable {
    case noUserAccount
    case emergencyCallPermissionMissing
}

/// Whether AutomatedSOS is on, with which policy and for what age: what must survive the app being closed.
public struct SOSSettings: Sendable, Hashable, Codable {
    public var enabled: Bool
    public var policy: SOSPolicy
    public var age: Int?

    public init(enabled: Bool = false, policy: SOSPolicy = .default, age: Int? = nil) {
        self.enabled = enabled
        self.policy = policy
        self.age = age
    }
}

/// Where the settings live between launches.
public protocol SOSSettingsStore: Sendable {
    /// The stored settings, or nil if there are none yet.
    func load() throws -> SOSSettings?
    func save(_ settings: SOSSettings) throws
}

/// Settings as a JSON file, replaced atomically so a crash mid-write leaves the old settings, never half of new ones.
public struct FileSOSSettingsStore: SOSSettingsStore {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> SOSSettings? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(SOSSettings.self, from: Data(contentsOf: url))
    }

    public func save(_ settings: SOSSettings) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(settings).write(to: url, options: .atomic)
    }
}

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
