import BrokerDomain
import Foundation
import HTTPTypes

/// How a `RunError` is answered over HTTP.
extension RunError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let errors):
            Problem.validationFailed(errors)
        case .invalidDraft(let violations):
            Problem.validationFailed(violations.map { FieldError(field: $0.field.jsonPath, message: $0.message) })
        case .notFound:
            Problem(status: .notFound, slug: "run-not-found", title: "No such run", detail: "There is no run with this id.")
        case .closed(let why):
            Problem(status: .conflict, slug: "run-closed", title: "The run no longer changes", detail: why)
        case .full:
            Problem(status: .conflict, slug: "run-full", title: "The run is full", detail: "Every place of this run is taken.")
        case .alreadyJoined:
            Problem(status: .conflict, slug: "already-joined", title: "Already joined", detail: "You have already joined this run.")
        case .notJoined:
            Problem(status: .conflict, slug: "not-joined", title: "Not a runner of this run", detail: "You have not joined this run.")
        case .fewerPlacesThanRunners(let runners):
            Problem(
                status: .conflict, slug: "fewer-places-than-runners", title: "Fewer places than runners",
                detail: "\(runners) runners have joined; the run cannot have fewer places.")
        case .checkInRefused(let why):
            Problem(status: .conflict, slug: "check-in-refused", title: "Check-in refused", detail: why)
        }
    }
}
