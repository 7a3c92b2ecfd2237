import Foundation

/// A stored receipt whose JWS does not read back as a receipt: only a bug (or a hand-edited row) makes one.
struct ConsentReceiptUnreadable: Error, CustomStringConvertible {
    var id: UUID
    var description: String { "consent receipt \(id.uuidString.lowercased()) is stored in a form this server cannot read" }
}
