import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.AccessLogEntry.KindPayload {
    /// Exhaustive: a new kind of access is a compile error here, not one shown as a single request.
    init(_ kind: AccessLogEntry.Kind) {
        switch kind {
        case .single: self = .single
        case .group: self = .group
        case .correction: self = .correction
        }
    }
}
