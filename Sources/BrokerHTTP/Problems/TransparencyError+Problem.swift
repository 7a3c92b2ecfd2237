import BrokerDomain
import Foundation
import HTTPTypes

/// How a `TransparencyError` is answered over HTTP.
extension TransparencyError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .companyNotFound:
            Problem(status: .notFound, slug: "company-not-found", title: "No such company", detail: "No third party has this id.")
        case .notBlocked:
            Problem(status: .notFound, slug: "not-blocked", title: "Not blocked", detail: "You have not blocked this company.")
        }
    }
}
