import Foundation

/// Where a record came from (its `sourceName`), and what kind of device that is: the Health app counts a
/// period once when several sources recorded it, taking the one highest in its list of sources.
package struct AppleHealthSource: Sendable, Equatable {
    /// Devices first: a watch on the wrist counts steps and sleep more closely than a phone in a pocket, and
    /// the Health app lists a person's own devices above apps unless they reorder them (which the export does
    /// not record).
    package enum Kind: Int, Sendable, Comparable {
        case watch, phone, other
        package static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    package var name: String
    package var kind: Kind
}

/// A record of a cumulative type (steps, distance, energy, standing, sleep) with its period and source,
/// kept apart from other samples until overlapping sources are resolved (`AppleHealthSourceOverlapStore`).
package struct AppleHealthSourcedRecord: Sendable, Equatable {
    package var type: SampleType
    package var value: Double
    /// Seconds since 1970; `end` equals `start` for a record without a usable end.
    package var start: Double
    package var end: Double
    /// An index into the parser's `sources`.
    package var source: Int32
}
