import BrokerDomain
import Foundation
import HTTPTypes

/// How a `RateLimitExceeded` is answered over HTTP.
extension RateLimitExceeded: ProblemConvertible {
    package var problem: Problem {
        Problem(
            status: .tooManyRequests, slug: "rate-limited", title: "Too many requests",
            detail:
                "This account may make at most \(limit.description) \(operation.noun); try again in \(retryAfterSeconds) seconds. Nothing was done.",
            headers: [.retryAfter: String(retryAfterSeconds)])
    }
}
