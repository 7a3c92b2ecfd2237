import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.Role {
    /// Exhaustive: a role added to the domain is a compile error here, never an account shown as a person.
    init(_ role: Role) {
        switch role {
        case .user: self = .user
        case .thirdParty: self = .thirdParty
        case .auditor: self = .auditor
        }
    }
}
