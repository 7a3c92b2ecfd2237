import Foundation

/// A mail transport failed. `permanent`: trying again cannot help (the relay refused the recipient or
/// our credentials), so the outbox gives the mail up at once instead of retrying it.
package struct MailDeliveryError: Error, CustomStringConvertible {
    package let description: String
    package var permanent = false

    package init(description: String, permanent: Bool = false) {
        self.description = description
        self.permanent = permanent
    }
}
