import Foundation

enum WebhookStoreError: Error {
    case noRow
}
