import Foundation

/// Which sample types a person shares with companies at all: every type is shared unless the person said
/// otherwise. A type they do not share is never granted, never downloaded, never announced by a
/// subscription's webhook, and contributes to no group cohort's filter, no group cell and no peer cell
/// (`SharingPreferenceStore` says where each is enforced). Sample types only: Track4Run's positions reach an
/// organiser through the runner's acceptance of the run's own request and are not covered.
package struct SharingPreferences: Sendable, Equatable {
    /// The types the person does not share, each with the time they stopped sharing it.
    package var unshared: [SampleType: Date]

    package init(unshared: [SampleType: Date] = [:]) { self.unshared = unshared }

    package func isShared(_ type: SampleType) -> Bool { unshared[type] == nil }

    /// Every sample type, in the catalogue's order, with whether it is shared: what the API and the console show.
    package var entries: [(type: SampleType, shared: Bool)] {
        SampleType.allCases.map { ($0, isShared($0)) }
    }

    /// One setting as an edge read it: a type (or why its name is none) and whether to share it.
    package struct Change: Sendable {
        package var type: Parsed<SampleType>
        package var shared: Bool

        package init(type: Parsed<SampleType>, shared: Bool) {
            self.type = type
            self.shared = shared
        }
    }
}
