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

/// What `skipped` counts: one reason and one HealthKit identifier.
package struct AppleHealthSkip: Hashable, Sendable {
    package var reason: AppleHealthSkipReason
    package var identifier: String

    package init(reason: AppleHealthSkipReason, identifier: String) {
        self.reason = reason
        self.identifier = identifier
    }
}

/// A record of a type Data4Help keeps whose value, unit or date cannot be used (not a number, an unknown unit,
/// out of the type's range, in the future …), with where it is, so that a person can find it in export.xml.
package struct AppleHealthInvalidRecord: Sendable, Equatable, Codable {
    /// The line of export.xml on which the record starts (1-based).
    package var line: Int
    package var identifier: String
    /// What is wrong with it, in words.
    package var reason: String

    package init(line: Int, identifier: String, reason: String) {
        self.line = line
        self.identifier = identifier
        self.reason = reason
    }
}
