import Hummingbird

/// Answers 503 while the database is down instead of letting requests queue for a pool connection:
/// at once for requests that arrive while it is down, and within a watchdog probe interval for requests
/// that were already waiting when it went down (their handler is cancelled; a write that committed
/// before that is idempotent to retry, and one that did not is not acknowledged).
///
/// Health probes, metrics and the contract are served regardless: `/health/ready` is how an operator
/// (or a load balancer) learns that this instance is not ready.
struct DatabaseAvailabilityMiddleware: RouterMiddleware {
    typealias Context = BrokerRequestContext
    let availability: DatabaseAvailability

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard request.uri.path.hasPrefix("/v1/") else { return try await next(request, context) }
        guard availability.isReachable else { throw Problem.databaseUnavailable }
        // `next` runs in a child task so that it can be cancelled when the database goes away. It does
        // not escape: the group is drained before this function returns, and nothing else calls `next`
        // meanwhile, so handing it to the child is safe even though it is not declared Sendable.
        return try await withoutActuallyEscaping(next) { next in
            let handler = UncheckedSendable(value: next)
            return try await withThrowingTaskGroup(of: Response?.self) { group in
                group.addTask { try await handler.value(request, context) }
            group.addTask {
                await availability.waitUntilUnreachable()
                if Task.isCancelled { return nil }
                throw Problem.databaseUnavailable
            }
            defer { group.cancelAll() }
            while let outcome = try await group.next() {
                if let response = outcome { return response }
            }
            throw Problem.databaseUnavailable
            }
        }
    }
}

private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
}

extension Problem {
    /// The database does not answer: try again shortly (the watchdog probes every second).
    static var databaseUnavailable: Problem {
        var problem = Problem(
            status: .serviceUnavailable, slug: "database-unavailable", title: "Service unavailable",
            detail: "The database is not reachable right now. Try again in a few seconds.")
        problem.headers[.retryAfter] = "5"
        return problem
    }
}
