import Foundation

/// What a person's acceptance may narrow, as they sent it: each field absent keeps what was asked.
/// `subscriptionDays` 0 grants no subscription (a one-off release of what has arrived by then).
package struct GrantNarrowing: Sendable, Equatable {
    package var types: [String]?
    package var windowFrom: String?
    package var windowTo: String?
    package var subscriptionDays: Int?

    package init(types: [String]? = nil, windowFrom: String? = nil, windowTo: String? = nil, subscriptionDays: Int? = nil) {
        (self.types, self.windowFrom, self.windowTo, self.subscriptionDays) = (types, windowFrom, windowTo, subscriptionDays)
    }

    /// Accept everything asked (that the person shares).
    package static let everything = GrantNarrowing()
}
