import Foundation

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
