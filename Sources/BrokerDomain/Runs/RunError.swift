/// What can go wrong with runs; each is a clear problem (`RunError+Problem`).
package enum RunError: Error, Equatable {
    case invalid([FieldError])
    case notFound
    /// The run has started (or was cancelled): it can no longer be edited, joined or left.
    case closed(String)
    case full
    case alreadyJoined
    case notJoined
    case fewerPlacesThanRunners(Int)
    /// Check-in refused, with what the runner should do.
    case checkInRefused(String)
}
