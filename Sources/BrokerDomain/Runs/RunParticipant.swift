import Foundation

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
