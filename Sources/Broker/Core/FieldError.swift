/// One offending field of invalid input: every capability's validation reports them, and the HTTP layer
/// answers them as a 422's `errors`.
package struct FieldError: Sendable, Equatable, Codable {
    package var field: String
    package var message: String
    package init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}
