import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.RunState {
    /// Exhaustive: a new state is a compile error here, not a run shown as upcoming.
    init(_ state: Run.State) {
        switch state {
        case .upcoming: self = .upcoming
        case .live: self = .live
        case .finished: self = .finished
        case .cancelled: self = .cancelled
        }
    }
}
