/// Why a record of an export was not imported although nothing is wrong with it: Data4Help does not keep
/// that kind of data. The import reports these grouped by reason, then by HealthKit identifier.
package enum AppleHealthSkipReason: String, Sendable, Hashable, Codable, CaseIterable {
    case unsupportedType = "unsupported type"
    /// Sleep analysis records of time in bed or awake: only time asleep is sleep.
    case notAsleep = "not asleep (in bed or awake)"
    /// Stand hours the watch recorded as idle.
    case notStood = "not a stood hour (idle)"
    /// Cumulative records whose whole period another source higher in the Health app's order also recorded
    /// (the phone's steps during a walk the watch counted): counted once, as the Health app does.
    case coveredByAnotherSource = "covered by a higher-priority source"
}
