import Foundation

/// What the person granted when they accepted a request: all it asked, or less (`ConsentTerms`). A record
/// of its own, named by its id in the person's access log, the audit trail and the consent receipts.
package struct ConsentGrant: Sendable, Equatable {
    package var id: UUID
    package var terms: ConsentTerms
    package var grantedAt: Date
    /// True when the person granted less than was asked.
    package var narrowed: Bool
}
