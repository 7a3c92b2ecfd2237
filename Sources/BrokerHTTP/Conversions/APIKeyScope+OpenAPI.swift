import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.APIKeyScope {
    /// Exhaustive: a new scope is a compile error here, not a key shown as read-only.
    init(_ scope: APIKeyScope) {
        switch scope {
        case .full: self = .full
        case .readOnly: self = .readOnly
        }
    }
}
