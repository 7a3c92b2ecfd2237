import Foundation

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
