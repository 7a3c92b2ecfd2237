/// One offending field of invalid input: every capability's validation reports them, and the HTTP layer
/// answers them as a 422's `errors`.
package struct FieldError: Sendable, Equatable, Codable {
    package var field: String
    package var message: String
    package init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    /// The first hundred of a batch's errors and, when there are more, one saying how many more: a
    /// 10,000-row upload that is wrong throughout gets a readable answer, not 10,000 entries.
    package static func firstHundred(_ errors: [FieldError], of items: String) -> [FieldError] {
        guard errors.count > 100 else { return errors }
        return Array(errors.prefix(100)) + [FieldError(field: items, message: "and \(errors.count - 100) more invalid \(items)")]
    }
}
