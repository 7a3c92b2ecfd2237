import BrokerDomain
import BrokerOpenAPI

// A single request's status both ways, exhaustively: a new status is a compile error, not a silent `pending`.

extension Components.Schemas.SingleRequestStatus {
    init(_ status: SingleRequest.Status) {
        switch status {
        case .pending: self = .pending
        case .accepted: self = .accepted
        case .refused: self = .refused
        case .cancelled: self = .cancelled
        case .expired: self = .expired
        }
    }
}

extension SingleRequest.Status {
    init(_ status: Components.Schemas.SingleRequestStatus) {
        switch status {
        case .pending: self = .pending
        case .accepted: self = .accepted
        case .refused: self = .refused
        case .cancelled: self = .cancelled
        case .expired: self = .expired
        }
    }
}
