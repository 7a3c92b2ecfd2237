import BrokerDomain
import Foundation
import HTTPTypes

/// How a `MetricsAccessError` is answered over HTTP.
extension MetricsAccessError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .disabled:
            Problem(
                status: .notFound, slug: "not-found", title: "Not found",
                detail: "Metrics are served only when the server is configured with METRICS_TOKEN.")
        case .wrongToken:
            Problem(
                status: .unauthorized, slug: "unauthenticated", title: "Authentication required",
                detail: "Send the metrics token as `Authorization: Bearer <METRICS_TOKEN>`.",
                headers: [.wwwAuthenticate: "Bearer"])
        }
    }
}
