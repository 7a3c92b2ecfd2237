import Foundation

/// One measurement of one person.
package struct Sample: Sendable, Equatable {
    package var type: SampleType
    package var value: Double
    package var at: Date

    package init(type: SampleType, value: Double, at: Date) {
        self.type = type
        self.value = value
        self.at = at
    }
}
