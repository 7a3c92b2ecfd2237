import Foundation
import HTTPTypes

/// Why an API key may not call an operation that its company's session may.
public enum APIKeyError: Error, ProblemConvertible, Equatable {
    /// Managing keys, changing credentials or deleting the account: only a signed-in session may.
    case sessionRequired
    /// The key's scope is `read_only` and the operation changes something.
    case readOnlyScope

    public var problem: Problem {
        switch self {
        case .sessionRequired:
            Problem(status: .forbidden, slug: "session-required", title: "Not allowed with an API key",
                    detail: "API keys cannot manage API keys or the webhook, change the account's credentials or delete the account; sign in instead.")
        case .readOnlyScope:
            Problem(status: .forbidden, slug: "api-key-read-only", title: "Read-only API key",
                    detail: "This API key is read-only; this operation changes data.")
        }
    }
}
