import BrokerDomain
import Foundation
import HTTPTypes

/// How a `WebhookError` is answered over HTTP.
extension WebhookError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let errors):
            Problem.validationFailed(errors)
        case .notFound:
            Problem(
                status: .notFound, slug: "not-found", title: "Not found",
                detail: "No webhook is registered; register one with PUT /v1/webhook.")
        }
    }
}
