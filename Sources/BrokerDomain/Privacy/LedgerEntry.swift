import Foundation

/// One debit of the ledger.
package struct LedgerEntry: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case cohort, release
        case peerStatistics = "peer_statistics"
    }
    package var id: Int64
    package var at: Date
    package var companyID: UUID?
    package var requestID: UUID?
    package var kind: Kind
    package var cells: Int
    var loss: PrivacyLoss
    package var rho: Double { loss.rho }
}
