import Foundation

/// Where the settings live between launches.
public protocol SOSSettingsStore: Sendable {
    /// The stored settings, or nil if there are none yet.
    func load() throws -> SOSSettings?
    func save(_ settings: SOSSettings) throws
}
