import BrokerDomain
import BrokerOpenAPI

extension Components.Schemas.PrivacyLedgerEntry.KindPayload {
    /// Exhaustive: a new kind of debit is a compile error here, not one shown to auditors as a release.
    init(_ kind: LedgerEntry.Kind) {
        switch kind {
        case .cohort: self = .cohort
        case .release: self = .release
        case .peerStatistics: self = .peerStatistics
        }
    }
}
