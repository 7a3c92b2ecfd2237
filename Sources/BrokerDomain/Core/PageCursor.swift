import Foundation

/// Where the next page of a list starts. Opaque outside the domain: the API and the console hand back the
/// `text` a list gave out, and only the list reads what it holds (a time and a tie-breaker, a sequence
/// number). A text the list did not give out is refused by the list (`InvalidPageRequest`, a 422).
package struct PageCursor: Sendable, Hashable {
    /// The cursor as the contract carries it (`nextCursor`, `?cursor=`).
    package let text: String

    package init(text: String) {
        self.text = text
    }

    /// A keyset position: base64url of `micros|key`, as every time-ordered list has given it out.
    init(_ key: PageKey) {
        let micros = Int64((key.time.timeIntervalSince1970 * 1_000_000).rounded())
        self.init(text: Data("\(micros)|\(key.key)".utf8).base64URLEncoded())
    }

    /// A position in a list ordered by a number the caller sees in every item anyway (the audit log's
    /// sequence number, a ledger entry's id): its decimal text, as those lists have always given it out.
    init(sequence: Int64) {
        self.init(text: String(sequence))
    }

    /// The keyset position this text holds; nil for anything a keyset list did not give out.
    var key: PageKey? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { return nil }
        let parts = decoded.split(separator: "|", maxSplits: 1)
        guard parts.count == 2, let micros = Int64(parts[0]), !parts[1].isEmpty else { return nil }
        return PageKey(time: Date(timeIntervalSince1970: Double(micros) / 1_000_000), key: String(parts[1]))
    }

    /// The sequence number this text holds; nil for anything that is not one.
    var sequence: Int64? { Int64(text) }
}
