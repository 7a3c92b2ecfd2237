/// What can go wrong with runs; each is a clear problem (`RunError+Problem`).
package enum RunError: Error, Equatable {
    case invalid([FieldError])
    /// A run's draft breaks its rules (`RunService.create`, `edit`): every field named at once.
    case invalidDraft([RunViolation])
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
