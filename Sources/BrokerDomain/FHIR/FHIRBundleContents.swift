/// What a FHIR Bundle holds for Data4Help, as `FHIRBundleImport` read it: the samples as sent (still to be
/// validated as every upload's are), the problems of entries that cannot be read, and what was skipped.
package struct FHIRBundleContents: Sendable {
    /// An Observation, or one component of a panel, that is not imported, and why (its status, a data
    /// absent reason). Not an error: the rest of the Bundle is imported.
    package struct Skipped: Sendable, Equatable {
        package var entry: Int
        package var reason: String
    }

    package var entries: [SampleBatch.Entry] = []
    /// Codes that are not in the table, units that are not accepted, fields of the wrong shape: each names
    /// the entry (`entry[3].resource.code`). One of them refuses the whole Bundle.
    package var problems: [FieldError] = []
    /// Entries not imported, by resource type (`Patient`, `Encounter`, and `Observation` for the skipped ones).
    package var skippedResources: [String: Int] = [:]
    package var skippedObservations: [Skipped] = []

    package init() {}

    mutating func skip(_ resourceType: String) {
        skippedResources[resourceType, default: 0] += 1
    }
}
