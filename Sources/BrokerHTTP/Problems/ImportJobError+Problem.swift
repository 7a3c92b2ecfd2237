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
        case .abandoned:
            Problem(
                status: .internalServerError, slug: "import-interrupted", title: "The import was interrupted",
                detail: ImportJobs.restartedDetail)
        }
    }
}
