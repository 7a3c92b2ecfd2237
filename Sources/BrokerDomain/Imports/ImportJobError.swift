import Foundation

/// Why an import could not start, or its job cannot be shown.
package enum ImportJobError: Error, Equatable {
    /// The person already has an import running (here or on another instance).
    case alreadyRunning
    /// As many background imports run as the server allows at once.
    case busy
    /// No job with this id belongs to the caller (never a hint that it belongs to someone else).
    case notFound
    /// The job's row was marked failed (by an instance that started and took it for abandoned) before its
    /// import began; the import does not run.
    case abandoned
    /// The server's disk had no room left for the upload as it arrived (ENOSPC, or a quota): nothing was kept.
    case noSpace
}
