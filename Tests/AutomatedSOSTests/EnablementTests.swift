import AutomatedSOS
import Foundation
import Testing

@Suite struct EnablementTests {
    @Test func enablingNeedsAUserAccount() throws {
        let directory = try temporaryDirectory()
        let store = FileSOSSettingsStore(url: directory.appendingPathComponent("sos.json"))
        let gate = SOSEnablement(store: store, permissions: Permissions(hasUserAccount: false, canPlaceEmergencyCalls: true))
        #expect(throws: SOSEnablementError.noUserAccount) { try gate.enable(age: 45) }
        #expect(!gate.isEnabled)
        #expect(try gate.makeMonitor() == nil)
    }

    @Test func enablingNeedsTheEmergencyCallPermission() throws {
        let directory = try temporaryDirectory()
        let store = FileSOSSettingsStore(url: directory.appendingPathComponent("sos.json"))
        let gate = SOSEnablement(store: store, permissions: Permissions(hasUserAccount: true, canPlaceEmergencyCalls: false))
        #expect(throws: SOSEnablementError.emergencyCallPermissionMissing) { try gate.enable(age: 45) }
        #expect(!gate.isEnabled)
    }

    @Test func theEnabledStateAndPolicySurviveARestart() throws {
        let directory = try temporaryDirectory()
        let url = directory.appendingPathComponent("settings/sos.json")
        let granted = Permissions(hasUserAccount: true, canPlaceEmergencyCalls: true)
        var policy = SOSPolicy.default
        policy.rules.removeAll { $0.type != .oxygenSaturation }
        policy.rules[0].threshold = .constant(93)
        try SOSEnablement(store: FileSOSSettingsStore(url: url), permissions: granted).enable(age: 70, policy: policy)

        // A new process: nothing but the file carries over.
        let reopened = SOSEnablement(store: FileSOSSettingsStore(url: url), permissions: granted)
        #expect(reopened.isEnabled)
        #expect(try reopened.settings() == SOSSettings(enabled: true, policy: policy, age: 70))
        var monitor = try #require(try reopened.makeMonitor())
        #expect(
            monitor.feed([sample(.oxygenSaturation, 92, minutes: 0), sample(.oxygenSaturation, 92, minutes: 1)]).map(\.rule)
                == ["oxygen_saturation_low"])
        #expect(monitor.feed([sample(.heartRate, 30, minutes: 0), sample(.heartRate, 30, minutes: 1)]).isEmpty)
    }

    @Test func disablingSurvivesARestartAndKeepsThePolicy() throws {
        let url = try temporaryDirectory().appendingPathComponent("sos.json")
        let granted = Permissions(hasUserAccount: true, canPlaceEmergencyCalls: true)
        let gate = SOSEnablement(store: FileSOSSettingsStore(url: url), permissions: granted)
        try gate.enable(age: 45)
        try gate.disable()
        let reopened = SOSEnablement(store: FileSOSSettingsStore(url: url), permissions: granted)
        #expect(!reopened.isEnabled)
        #expect(try reopened.settings().policy == .default)
        #expect(try reopened.makeMonitor() == nil)
    }

    @Test func aWithdrawnPermissionStopsTheMonitor() throws {
        let url = try temporaryDirectory().appendingPathComponent("sos.json")
        try SOSEnablement(store: FileSOSSettingsStore(url: url), permissions: Permissions(hasUserAccount: true, canPlaceEmergencyCalls: true))
            .enable(age: 45)
        let revoked = SOSEnablement(
            store: FileSOSSettingsStore(url: url), permissions: Permissions(hasUserAccount: true, canPlaceEmergencyCalls: false))
        #expect(try revoked.makeMonitor() == nil)
    }
}

extension SOSMonitor: Equatable {
    public static func == (lhs: SOSMonitor, rhs: SOSMonitor) -> Bool { lhs.policy == rhs.policy && lhs.age == rhs.age }
}
