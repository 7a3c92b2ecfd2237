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
