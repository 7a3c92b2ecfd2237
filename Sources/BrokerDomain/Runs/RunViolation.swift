/// One offending field of a run's draft, named by the domain (`RunField`), not by any edge.
package struct RunViolation: Sendable, Equatable {
    package var field: RunField
    package var message: String

    package init(field: RunField, message: String) {
        self.field = field
        self.message = message
    }
}
