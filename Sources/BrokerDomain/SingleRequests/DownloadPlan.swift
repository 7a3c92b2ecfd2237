import Foundation

/// What one download of a single request releases: the samples of the requested types inside the window
/// whose arrival number lies in `(cursor, bound]`, where `bound` is the arrival number of the last such
/// sample (so nothing the request does not release moves it). The bound is fixed before the first row is read, so
/// the set is exact: arrival order is commit order, and nothing that arrived after the decision, the
/// end of a subscription or its expiry is ever inside it.
package struct DownloadPlan: Sendable {
    package var request: SingleRequest
    package var userID: UUID
    package var cursor: Int64
    package var bound: Int64
    package var availableTypes: [SampleType]
    /// Where the next download starts (`max(cursor, bound)`, sealed: `DownloadCursor`); never behind the
    /// cursor the caller sent. It moves only when the request releases something new.
    package var nextCursor: String
    /// The person as this request's receipts, Consent and FHIR Observations name them (`ConsentPseudonyms`),
    /// worked out with the plan so that a download in FHIR needs nothing more once its head is sent.
    package var subject: String
    /// The primary's WAL position once the plan was made (`ReplicationPositionStore.position`), when a standby
    /// is configured: a standby that has replayed past it holds every row the plan releases, so a chunk may
    /// be read there (`DatabaseReads.read(replayedPast:)`). Nil: every chunk is read on the primary.
    package var primaryPosition: Int64? = nil
}
