import BrokerDomain
import Foundation
import HTTPTypes

/// How a `GroupRequestError` is answered over HTTP.
extension GroupRequestError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let violations): Problem.validationFailed(violations.map { FieldError(field: $0.field.jsonPath, message: $0.message) })
        case .notFound:
            Problem(
                status: .notFound, slug: "group-request-not-found", title: "No such group request",
                detail: "There is no group request with this id among those you may see.")
        case .notAccepted:
            Problem(
                status: .conflict, slug: "not-accepted", title: "The group request was refused",
                detail: "Results exist only for accepted group requests.")
        case .notReleased:
            Problem(
                status: .conflict, slug: "not-released", title: "Nothing released yet",
                detail: "No results of this group request have been released.")
        case .busy:
            Problem(
                status: .serviceUnavailable, slug: "busy", title: "Busy",
                detail: "Other releases changed this cohort's privacy budgets while it was evaluated; nothing was released. Try again.",
                headers: [.retryAfter: "5"])
        case .noActiveSubscription(let detail):
            Problem(status: .conflict, slug: "no-active-subscription", title: "No active subscription", detail: detail)
        }
    }
}
