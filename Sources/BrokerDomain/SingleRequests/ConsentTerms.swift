import Foundation

/// What a single request asks for, or what a person granted of it: the types, the window of sample
/// times and the subscription's length (nil: a one-off release of what had arrived at acceptance).
package struct ConsentTerms: Sendable, Equatable {
    package var types: [RequestedType]
    package var windowFrom: Date?
    package var windowTo: Date?
    package var subscriptionDays: Int?

    package init(types: [RequestedType], windowFrom: Date?, windowTo: Date?, subscriptionDays: Int?) {
        (self.types, self.windowFrom, self.windowTo, self.subscriptionDays) = (types, windowFrom, windowTo, subscriptionDays)
    }
}
