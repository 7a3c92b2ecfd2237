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
