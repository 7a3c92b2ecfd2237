import Foundation

/// Where a page of samples ends: its last sample's time and type.
package struct SampleCursor: Sendable, Equatable {
    package var at: Date
    package var type: SampleType

    package init(at: Date, type: SampleType) {
        self.at = at
        self.type = type
    }

    package init?(text: String) {
        guard let cursor = PageCursor(text: text), let type = SampleType(rawValue: cursor.key) else { return nil }
        self.init(at: cursor.time, type: type)
    }

    package var text: String { PageCursor(time: at, key: type.rawValue).text }
}
