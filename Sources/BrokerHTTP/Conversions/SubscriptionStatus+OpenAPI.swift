import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.SubscriptionStatus {
    /// Exhaustive: a new status is a compile error here, not a silently pending subscription.
    init(_ status: SingleRequest.Subscription.Status) {
        switch status {
        case .pending: self = .pending
        case .active: self = .active
        case .ended: self = .ended
        case .expired: self = .expired
        }
    }
}
