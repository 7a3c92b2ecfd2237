import Foundation

/// What can go wrong with group requests, each with the status the contract gives it.
package enum GroupRequestError: Error, Equatable {
    case invalid([GroupRequestViolation])
    case notFound
    case notAccepted
    case notReleased
    case noActiveSubscription(String)
    /// Other releases kept taking the cohort's last budget while this one was evaluated.
    case busy
}
