import Foundation

/// Why a bulk export cannot be started or shown.
package enum BulkExportError: Error, Equatable {
    /// A kick-off parameter is not one this server supports (`_type`, `_since`, `_outputFormat`).
    case invalid([FieldError])
    /// The company already has an export being planned: the IG's 429, retried after a few seconds.
    case planning(retryAfterSeconds: Int)
    /// No export (or file) with this id belongs to the caller, or it expired: never a hint that it is
    /// another company's.
    case notFound
}
