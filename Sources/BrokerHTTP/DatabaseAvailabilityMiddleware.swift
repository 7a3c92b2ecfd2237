import BrokerDomain
import Hummingbird

/// Answers 503 at once for `/v1` requests that arrive while the database is down, instead of letting them
/// queue for a pool connection (PostgresNIO's pool waits until its circuit breaker trips, about a minute).
/// Requests already under way when it goes down are `OutageGuard`'s.
///
/// Health probes, metrics and the contract are served regardless: `/health/ready` is how an operator
/// (or a load balancer) learns that this instance is not ready.
package struct DatabaseAvailabilityMiddleware: RouterMiddleware {
    package init(availability: DatabaseAvailability) {
        self.availability = availability
    }

    package typealias Context = BrokerRequestContext
    let availability: DatabaseAvailability

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if request.uri.path.hasPrefix("/v1/"), !availability.isReachable { throw Problem.databaseUnavailable }
        return try await next(request, context)
    }
}

extension Problem {
    /// The database does not answer: try again shortly (the watchdog probes every second).
    static var databaseUnavailable: Problem {
        tryAgainShortly(
            slug: "database-unavailable", title: "Service unavailable",
            detail: "The database is not reachable right now. Try again in a few seconds.")
    }

    /// A bound on waiting was hit (a pooled connection, an evaluation slot, a lock, a statement's time):
    /// the server is too busy right now, nothing was changed, and the same request can be sent again.
    static var serverBusy: Problem {
        tryAgainShortly(
            slug: "server-busy", title: "Service busy",
            detail: "The server is too busy to answer this request right now; nothing was changed. Try again in a few seconds.")
    }

    private static func tryAgainShortly(slug: String, title: String, detail: String) -> Problem {
        var problem = Problem(status: .serviceUnavailable, slug: slug, title: title, detail: detail)
        problem.headers[.retryAfter] = "5"
        return problem
    }
}
