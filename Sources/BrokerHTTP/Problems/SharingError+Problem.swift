import BrokerDomain
import Foundation
import HTTPTypes

/// How a `SharingError` is answered over HTTP.
extension SharingError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let violations):
            Problem.validationFailed(
                FieldError.firstHundred(violations.map { FieldError(field: "types[\($0.index)].type", message: $0.message) }, of: "types"))
        }
    }
}
