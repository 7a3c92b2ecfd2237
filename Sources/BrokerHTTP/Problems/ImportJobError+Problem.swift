import BrokerDomain
import Foundation
import HTTPTypes

/// How a `ImportJobError` is answered over HTTP.
extension ImportJobError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .alreadyRunning:
            Problem(
                status: .conflict, slug: "import-running", title: "An import is already running",
                detail: "One of your imports is still running; wait until it has finished (its status URL says when), then import again.")
        case .busy:
            Problem(
                status: .serviceUnavailable, slug: "server-busy", title: "Service busy",
                detail: "The server is running as many large imports as it can; nothing was stored. Try again in a minute.",
                headers: [.retryAfter: "60"])
        case .notFound:
            Problem(
                status: .notFound, slug: "import-not-found", title: "No such import",
                detail: "There is no import with this id among yours.")
        case .noSpace:
            // 503, not 507: a client retries a 503 with Retry-After by itself, and the room comes back
            // once an operator (alerted by the error this logs) frees some, or other uploads end.
            Problem(
                status: .serviceUnavailable, slug: "storage-full", title: "No room for the upload",
                detail: "The server has no room left to receive this upload; nothing was stored. Try again later.",
                headers: [.retryAfter: "300"])
        case .abandoned:
            Problem(
                status: .internalServerError, slug: "import-interrupted", title: "The import was interrupted",
                detail: ImportJobs.restartedDetail)
        }
    }
}
