import Foundation

/// Where a record came from (its `sourceName`), and what kind of device that is: the Health app counts a
/// period once when several sources recorded it, taking the one highest in its list of sources.
public struct AppleHealthSource: Sendable, Equatable {
    /// Devices first: a watch on the wrist counts steps and sleep more closely than a phone in a pocket, and
    /// the Health app lists a person's own devices above apps unless they reorder them (which the export does
    /// not record).
    public enum Kind: Int, Sendable, Comparable {
        case watch, phone, other
        public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    public var name: String
    public var kind: Kind
}

/// A record of a cumulative type (steps, distance, energy, standing, sleep) with its period and source,
/// kept apart from other samples until overlapping sources are resolved (`AppleHealthSourceOverlapStore`).
public struct AppleHealthSourcedRecord: Sendable, Equatable {
    public var type: SampleType
    public var value: Double
    /// Seconds since 1970; `end` equals `start` for a record without a usable end.
    public var start: Double
    public var end: Double
    /// An index into the parser's `sources`.
    public var source: Int32
}
