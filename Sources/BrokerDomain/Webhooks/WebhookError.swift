import Foundation

/// What can go wrong with a third party's webhook, each with the status the contract gives it.
package enum WebhookError: Error, Equatable {
    case invalid([FieldError])
    case notFound
}
