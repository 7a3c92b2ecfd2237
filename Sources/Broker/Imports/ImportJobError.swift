import Foundation

/// Why an import could not start, or its job cannot be shown.
public enum ImportJobError: Error, ProblemConvertible, Equatable {
    /// The person already has an import running (here or on another instance).
    case alreadyRunning
    /// As many background imports run as the server allows at once.
    case busy
    /// No job with this id belongs to the caller (never a hint that it belongs to someone else).
    case notFound
    /// The job's row was marked failed (by an instance that started and took it for abandoned) before its
    /// import began; the import does not run.
    case abandoned

    public var problem: Problem {
        switch self {
        case .alreadyRunning:
            Problem(status: .conflict, slug: "import-running", title: "An import is already running",
                    detail: "One of your imports is still running; wait until it has finished (its status URL says when), then import again.")
        case .busy:
            Problem(status: .serviceUnavailable, slug: "server-busy", title: "Service busy",
                    detail: "The server is running as many large imports as it can; nothing was stored. Try again in a minute.",
                    headers: [.retryAfter: "60"])
        case .notFound:
            Problem(status: .notFound, slug: "import-not-found", title: "No such import",
                    detail: "There is no import with this id among yours.")
        case .abandoned:
            Problem(status: .internalServerError, slug: "import-interrupted", title: "The import was interrupted",
                    detail: ImportJobs.restartedDetail)
        }
    }
}
