/// One offending field of invalid input: every capability's validation reports them, and the HTTP layer
/// answers them as a 422's `errors`.
public struct FieldError: Sendable, Equatable, Codable {
    public var field: String
    public var message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}
