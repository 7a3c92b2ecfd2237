import BrokerDomain
import BrokerOpenAPI

// A group request's status both ways, exhaustively: a new status is a compile error, not a silent refusal.

extension Components.Schemas.GroupRequestStatus {
    init(_ status: GroupRequest.Status) {
        switch status {
        case .accepted: self = .accepted
        case .refused: self = .refused
        }
    }
}

extension GroupRequest.Status {
    init(_ status: Components.Schemas.GroupRequestStatus) {
        switch status {
        case .accepted: self = .accepted
        case .refused: self = .refused
        }
    }
}
