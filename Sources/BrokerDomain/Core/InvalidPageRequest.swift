import Foundation

/// A `limit` or `cursor` a list cannot take: 422, naming the field. (A list with parameters of its own
/// reports these with theirs, in its own error.)
package struct InvalidPageRequest: Error, Sendable, Equatable {
    package var errors: [FieldError]
}
