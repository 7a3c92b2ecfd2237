import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.Subscription.EndedByPayload {
    /// Exhaustive: a new party is a compile error here, not an ended subscription that says by nobody.
    init(_ party: SingleRequest.Subscription.Party) {
        switch party {
        case .user: self = .user
        case .thirdParty: self = .thirdParty
        }
    }
}
