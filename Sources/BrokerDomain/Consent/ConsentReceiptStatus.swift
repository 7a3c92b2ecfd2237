/// What a consent receipt attests: the grant (`granted`), or its end. A stop by either side, a block and an
/// erasure are all `revoked` with `endedBy`, the same words the company's `subscription.ended` webhook uses
/// (a block is not disclosed to the company, and the receipt it receives must not disclose it either); a
/// subscription whose days ran out is `expired`. A refusal has none: the company may not learn of it
/// (`SingleRequest.seenBySender`), and a receipt is a document both sides hold.
package enum ConsentReceiptStatus: String, Sendable, Codable, CaseIterable {
    case granted, revoked, expired
}
