import Foundation

/// The rules' distances and times, in one place.
package enum RunRules {
    /// A runner checks in within this many metres of the path's start…
    package static let startAreaMetres = 100.0
    /// …during the hour before the start…
    package static let checkInWindow: TimeInterval = 3600
    /// …with a position uploaded in the last minutes (the phone is sharing, R47).
    package static let freshPosition: TimeInterval = 300
    /// A runner reached the path's middle, or its finish, within this many metres of it.
    package static let checkpointMetres = 50.0
    /// The run's single requests go out this long before the start ("on the day of the run", R38).
    package static let requestLead: TimeInterval = 24 * 3600
    /// Runs start at least this far ahead when created or moved, so runners can join and check in.
    package static let minimumLead: TimeInterval = 5 * 60
}
