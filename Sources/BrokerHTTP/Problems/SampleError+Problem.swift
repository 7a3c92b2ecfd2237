import BrokerDomain
import Foundation
import HTTPTypes

/// How a `SampleError` is answered over HTTP.
extension SampleError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let errors):
            Problem.validationFailed(errors)
        case .notAUser:
            Problem(
                status: .forbidden, slug: "wrong-role", title: "Not allowed for this role",
                detail: "Only people (role user) hold health data.")
        case .importFailed(let why):
            Problem(
                status: .unprocessableContent, slug: "import-failed", title: "The file cannot be imported",
                detail: "\(why) Nothing from this file was stored.")
        }
    }
}
