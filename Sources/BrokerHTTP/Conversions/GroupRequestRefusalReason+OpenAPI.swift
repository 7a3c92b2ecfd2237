import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.GroupRequest.RefusalReasonPayload {
    /// Exhaustive: a new reason is a compile error here, not a refusal shown without its reason.
    init(_ reason: GroupRequest.RefusalReason) {
        switch reason {
        case .cohortBelowThreshold: self = .cohortBelowThreshold
        case .cohortTooSimilar: self = .cohortTooSimilar
        }
    }
}
