import Foundation

/// What can go wrong with blocks.
public enum TransparencyError: Error, ProblemConvertible, Equatable {
    case companyNotFound
    case notBlocked

    public var problem: Problem {
        switch self {
        case .companyNotFound:
            Problem(status: .notFound, slug: "company-not-found", title: "No such company", detail: "No third party has this id.")
        case .notBlocked:
            Problem(status: .notFound, slug: "not-blocked", title: "Not blocked", detail: "You have not blocked this company.")
        }
    }
}
