import Foundation

/// One signed consent receipt as stored and listed: the JWS both sides hold, and what it says.
package struct ConsentReceipt: Sendable, Equatable {
    package var id: UUID
    package var requestID: UUID
    package var grantID: UUID
    package var status: ConsentReceiptStatus
    package var issuedAt: Date
    /// The receipt itself, a compact JWS (`ConsentReceiptJWS`).
    package var jws: String
    /// Its claims as the server signed them (read from the JWS's payload; `ConsentReceiptJWS.verify` is
    /// what proves them).
    package var claims: ConsentReceiptClaims
}
