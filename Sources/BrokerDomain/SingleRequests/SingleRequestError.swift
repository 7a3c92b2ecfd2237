import Foundation

/// What can go wrong with single requests, each with the status the contract gives it. Creation has no
/// "no such person" or "blocked" answer: either would tell a company who is registered (issue 17).
package enum SingleRequestError: Error, Equatable {
    case invalid([FieldError])
    case notFound
    case duplicatePending
    case notPending(SingleRequest.Status)
    case notAccepted
    case noActiveSubscription(String)
    case noRequestedData
}
