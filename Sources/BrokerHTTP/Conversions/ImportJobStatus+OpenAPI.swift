import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.ImportJob.StatusPayload {
    /// Exhaustive: a new status is a compile error here, not a job shown as failed.
    init(_ status: ImportJob.Status) {
        switch status {
        case .running: self = .running
        case .succeeded: self = .succeeded
        case .failed: self = .failed
        }
    }
}
