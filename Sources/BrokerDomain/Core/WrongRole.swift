/// The caller's role may not do this (a person sending a group request, an auditor reading an inbox …):
/// one error for every capability, so the answer is the same wherever a role is refused.
package struct WrongRole: Error, Sendable, Equatable {
    /// Says who may, for the caller: "Only third parties send single requests."
    package var detail: String

    package init(_ detail: String = "This operation is not available to the caller's role.") {
        self.detail = detail
    }
}
