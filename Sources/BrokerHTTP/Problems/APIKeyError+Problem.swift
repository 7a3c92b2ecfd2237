import BrokerDomain
import Foundation
import HTTPTypes

/// How a `APIKeyError` is answered over HTTP.
extension APIKeyError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .sessionRequired:
            Problem(
                status: .forbidden, slug: "session-required", title: "Not allowed with an API key",
                detail: "API keys cannot manage API keys or the webhook, change the account's credentials or delete the account; sign in instead.")
        case .readOnlyScope:
            Problem(
                status: .forbidden, slug: "api-key-read-only", title: "Read-only API key",
                detail: "This API key is read-only; this operation changes data.")
        }
    }
}
