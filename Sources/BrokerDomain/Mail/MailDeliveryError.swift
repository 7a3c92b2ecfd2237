import Foundation

/// A mail transport failed; the registration that wanted to send it is rolled back.
package struct MailDeliveryError: Error, CustomStringConvertible {
    package let description: String
}
