import Foundation

/// Where a page of samples ends: its last sample's time and type.
struct SampleCursor: Sendable, Equatable {
    var at: Date
    var type: SampleType

    init(at: Date, type: SampleType) {
        self.at = at
        self.type = type
    }

    /// The position a page's cursor holds; nil for one the list of samples did not give out.
    init?(_ cursor: PageCursor) {
        guard let key = cursor.key, let type = SampleType(rawValue: key.key) else { return nil }
        self.init(at: key.time, type: type)
    }

    var pageCursor: PageCursor { PageCursor(PageKey(time: at, key: type.rawValue)) }
}
