import Foundation

/// What can go wrong with a third party's webhook, each with the status the contract gives it.
public enum WebhookError: Error, ProblemConvertible, Equatable {
    case invalid([FieldError])
    case notFound

    public var problem: Problem {
        switch self {
        case .invalid(let errors):
            Problem.validationFailed(errors)
        case .notFound:
            Problem(status: .notFound, slug: "not-found", title: "Not found",
                    detail: "No webhook is registered; register one with PUT /v1/webhook.")
        }
    }
}
