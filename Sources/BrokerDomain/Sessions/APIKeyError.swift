import Foundation

/// Why an API key may not call an operation that its company's session may.
package enum APIKeyError: Error, Equatable {
    /// Managing keys, changing credentials or deleting the account: only a signed-in session may.
    case sessionRequired
    /// The key's scope is `read_only` and the operation changes something.
    case readOnlyScope
}
