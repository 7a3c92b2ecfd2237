import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.GroupSubscription.StatusPayload {
    /// Exhaustive: a new status is a compile error here, not a silently active subscription.
    init(_ status: GroupRequest.Subscription.Status) {
        switch status {
        case .active: self = .active
        case .ended: self = .ended
        case .expired: self = .expired
        }
    }
}
