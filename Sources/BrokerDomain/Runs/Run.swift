import Foundation

/// A run an organiser (a third party) set up: where (its path), when (start and duration) and for how many.
package struct Run: Sendable, Equatable {
    /// Computed from time, except `cancelled`.
    package enum State: String, Sendable, CaseIterable { case upcoming, live, finished, cancelled }

    package var id: UUID
    package var organiserID: UUID
    package var organiserName: String
    package var name: String
    package var startsAt: Date
    package var durationMinutes: Int
    package var maxParticipants: Int
    package var path: RunPath
    package var pathMetres: Double
    package var cancelledAt: Date?
    package var createdAt: Date
    /// Runners who joined and were not removed at the start.
    package var participants: Int

    package var endsAt: Date { startsAt.addingTimeInterval(TimeInterval(durationMinutes * 60)) }

    package func state(at now: Date) -> State {
        if cancelledAt != nil { return .cancelled }
        if now < startsAt { return .upcoming }
        return now < endsAt ? .live : .finished
    }
}

/// One runner of one run, as they and the organiser see it.
package struct RunParticipant: Sendable, Equatable {
    package var runID: UUID
    package var userID: UUID
    package var bib: Int
    package var displayName: String?
    package var joinedAt: Date
    /// The run's single request to the runner, once sent (on the run's day).
    package var requestID: UUID?
    /// That request's status as the runner sees it (`accepted` once they share).
    package var requestStatus: SingleRequest.Status?
    package var checkedInAt: Date?
    /// Not checked in when the run started (R48).
    package var removedAt: Date?
    package var finishedAt: Date?
    package var privacyZone: PrivacyZone?
    /// The run's request is accepted and still running: the runner shares their position for the run now.
    package var sharing: Bool = false

    /// The name spectators see: the bib, after the chosen display name if there is one.
    package var publicName: String { Self.publicName(bib: bib, displayName: displayName) }

    /// "Laura · Bib 3", or "Bib 3": the bib stands beside every display name, so no name, however alike
    /// another runner's bib, is shown alone (issue 27). The name is a bidi isolate (U+2068 FIRST STRONG
    /// ISOLATE … U+2069 POP DIRECTIONAL ISOLATE): whatever its direction or controls, even in a name stored
    /// before they were removed, it cannot reorder the bib after it ("Laura\u{202E}" would show "21 biB").
    package static func publicName(bib: Int, displayName: String?) -> String {
        displayName.map { "\u{2068}\($0)\u{2069} · Bib \(bib)" } ?? "Bib \(bib)"
    }
}

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
