/// One offending field of a group request, named by the domain (`GroupRequestField`), not by any edge.
package struct GroupRequestViolation: Sendable, Equatable {
    package var field: GroupRequestField
    package var message: String

    package init(field: GroupRequestField, message: String) {
        self.field = field
        self.message = message
    }
}
