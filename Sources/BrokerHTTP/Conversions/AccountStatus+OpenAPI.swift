import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.AccountStatus {
    /// Exhaustive: a new status is a compile error here, not a silent `pending`.
    init(_ status: AccountStatus) {
        switch status {
        case .pending: self = .pending
        case .active: self = .active
        }
    }
}
