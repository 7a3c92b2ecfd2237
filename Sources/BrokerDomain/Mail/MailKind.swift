import Foundation

/// What a mail is about. Security mails (an account's own credentials) always go out; notifications can
/// each be turned off by their recipient, and carry a one-click unsubscribe link for their kind.
package enum MailKind: String, Sendable, CaseIterable, Codable {
    case activation = "activation"
    case registrationAttempt = "registration_attempt"
    case apiKeyCreated = "api_key_created"
    case passwordReset = "password_reset"
    case passwordChanged = "password_changed"
    case runCancelled = "run_cancelled"
    // Notifications to a person.
    case newRequest = "new_request"
    case subscriptionEnding = "subscription_ending"
    case firstDownload = "first_download"
    case weeklyDigest = "weekly_digest"
    // Notifications to a company.
    case requestGranted = "request_granted"
    case requestExpired = "request_expired"

    /// The kinds a recipient may turn off (and unsubscribe from by a mail's link).
    package static let notifications: [MailKind] = [
        .newRequest, .subscriptionEnding, .firstDownload, .weeklyDigest, .runCancelled, .requestGranted, .requestExpired,
    ]

    package var canBeTurnedOff: Bool { Self.notifications.contains(self) }

    /// The notifications an account of `role` can receive.
    package static func notifications(for role: Role) -> [MailKind] {
        switch role {
        case .user: [.newRequest, .subscriptionEnding, .firstDownload, .weeklyDigest, .runCancelled]
        case .thirdParty: [.requestGranted, .requestExpired]
        case .auditor: []
        }
    }
}
