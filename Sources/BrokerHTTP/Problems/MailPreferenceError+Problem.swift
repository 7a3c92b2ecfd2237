import BrokerDomain
import Foundation
import HTTPTypes

/// How a `MailPreferenceError` is answered over HTTP.
extension MailPreferenceError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .notReceived(let kinds):
            Problem.validationFailed(kinds.map { FieldError(field: "notifications", message: "\($0) is not a notification this account receives") })
        }
    }
}
