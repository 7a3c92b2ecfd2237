import BrokerDomain
import Foundation
import HTTPTypes

/// How a `SingleRequestError` is answered over HTTP.
extension SingleRequestError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let errors):
            Problem.validationFailed(errors)
        case .notFound:
            Problem(
                status: .notFound, slug: "request-not-found", title: "No such request",
                detail: "There is no single request with this id among yours.")
        case .duplicatePending:
            Problem(
                status: .conflict, slug: "duplicate-pending-request", title: "A request is already pending",
                detail: "You already have a pending request to this email or fiscal code; wait for it to be answered, cancel it, or let it expire.")
        case .notPending(let status):
            Problem(
                status: .conflict, slug: "not-pending", title: "The request is not pending",
                detail: "The request is already \(status.rawValue).")
        case .notAccepted:
            Problem(
                status: .conflict, slug: "not-accepted", title: "The request is not accepted",
                detail: "Data can be downloaded only for an accepted request.")
        case .noActiveSubscription(let why):
            Problem(status: .conflict, slug: "no-active-subscription", title: "No active subscription", detail: why)
        case .noRequestedData:
            Problem(
                status: .conflict, slug: "no-requested-data", title: "No requested data",
                detail: "The person has no data of the requested types in the granted range.")
        }
    }
}
