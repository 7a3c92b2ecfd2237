/// What `skipped` counts: one reason and one HealthKit identifier.
package struct AppleHealthSkip: Hashable, Sendable {
    package var reason: AppleHealthSkipReason
    package var identifier: String

    package init(reason: AppleHealthSkipReason, identifier: String) {
        self.reason = reason
        self.identifier = identifier
    }
}
