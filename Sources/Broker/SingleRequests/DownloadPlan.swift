import Foundation

/// What one download of a single request releases: the samples of the requested types inside the window
/// whose arrival number lies in `(cursor, bound]`, where `bound` is the arrival number of the last such
/// sample (so nothing the request does not release moves it). The bound is fixed before the first row is read, so
/// the set is exact: arrival order is commit order, and nothing that arrived after the decision, the
/// end of a subscription or its expiry is ever inside it.
public struct DownloadPlan: Sendable {
    public var request: SingleRequest
    public var userID: UUID
    public var cursor: Int64
    public var bound: Int64
    public var availableTypes: [SampleType]
    /// Where the next download starts (`max(cursor, bound)`, sealed: `DownloadCursor`); never behind the
    /// cursor the caller sent. It moves only when the request releases something new.
    public var nextCursor: String
}
