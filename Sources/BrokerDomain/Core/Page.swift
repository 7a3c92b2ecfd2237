import Foundation

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
