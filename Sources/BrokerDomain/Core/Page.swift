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

/// A keyset position inside the domain: the sort key (a time) and tie-breaker (an id, a type …) of the last
/// row of the previous page. Stores read it; callers see only its `PageCursor`.
struct PageKey: Sendable, Equatable {
    var time: Date
    var key: String

    init(time: Date, key: String) {
        self.time = time
        self.key = key
    }

    init(time: Date, id: UUID) {
        self.init(time: time, key: id.uuidString.lowercased())
    }

    /// The tie-breaker as an id, for lists ordered by (time, id).
    var id: UUID? { UUID(uuidString: key) }
}

/// One page of any list: its items and the cursor of the next page (nil on the last page).
package struct Page<Item: Sendable>: Sendable {
    package var items: [Item]
    package var next: PageCursor?

    package init(items: [Item], next: PageCursor?) {
        self.items = items
        self.next = next
    }

    /// `rows` holds up to `limit + 1` rows: the extra one only says another page exists.
    init(rows: [Item], limit: Int, cursor: (Item) -> PageCursor) {
        self.items = Array(rows.prefix(limit))
        self.next = rows.count > limit ? self.items.last.map(cursor) : nil
    }

    /// The same, for a list ordered by a keyset.
    init(rows: [Item], limit: Int, key: (Item) -> PageKey) {
        self.init(rows: rows, limit: limit, cursor: { PageCursor(key($0)) })
    }

    /// The same page of other items (an edge's representation of each), with the same next cursor.
    package func map<Other>(_ transform: (Item) throws -> Other) rethrows -> Page<Other> {
        Page<Other>(items: try items.map(transform), next: next)
    }
}

/// `?limit=&cursor=` as the contract gives them to every list: limit 1–1000 (default 100), and a cursor
/// only as this list gave it out. The edges pass them on as received; the list checks them.
package struct PageRequest: Sendable, Equatable {
    package static let defaultLimit = 100
    package static let limits = 1...1000

    package var limit: Int?
    package var cursor: PageCursor?

    package init(limit: Int? = nil, cursor: PageCursor? = nil) {
        self.limit = limit
        self.cursor = cursor
    }

    /// The query's `limit` and `cursor` text.
    package init(limit: Int?, cursor text: String?) {
        self.init(limit: limit, cursor: text.map(PageCursor.init(text:)))
    }

    /// The limit, and the position `decode` reads from the cursor; problems are added to `errors`, beside
    /// the list's other parameters.
    func read<Position>(_ decode: (PageCursor) -> Position?, into errors: inout [FieldError]) -> (limit: Int, after: Position?) {
        let limit = limit ?? Self.defaultLimit
        if !Self.limits.contains(limit) {
            errors.append(FieldError(field: "limit", message: "must be \(Self.limits.lowerBound)–\(Self.limits.upperBound)"))
        }
        let after = cursor.flatMap(decode)
        if cursor != nil, after == nil {
            errors.append(FieldError(field: "cursor", message: "is not a cursor this API gave out"))
        }
        return (limit, after)
    }

    /// The same for a list that takes no other parameters to check.
    func read<Position>(_ decode: (PageCursor) -> Position?) throws(InvalidPageRequest) -> (limit: Int, after: Position?) {
        var errors: [FieldError] = []
        let page = read(decode, into: &errors)
        guard errors.isEmpty else { throw InvalidPageRequest(errors: errors) }
        return page
    }

    /// The limit and the (time, id) position of a list ordered by creation, newest or soonest first.
    func readByTimeAndID() throws(InvalidPageRequest) -> (limit: Int, after: PageKey?) {
        try read { cursor in cursor.key.flatMap { $0.id == nil ? nil : $0 } }
    }
}

/// A `limit` or `cursor` a list cannot take: 422, naming the field. (A list with parameters of its own
/// reports these with theirs, in its own error.)
package struct InvalidPageRequest: Error, Sendable, Equatable {
    package var errors: [FieldError]
}
