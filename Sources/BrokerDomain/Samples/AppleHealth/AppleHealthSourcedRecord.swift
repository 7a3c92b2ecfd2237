import Foundation

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
