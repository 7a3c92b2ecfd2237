import BrokerDomain
import BrokerOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import PostgresStatements

/// Answers 503 for an operation that was under way when the database went away, instead of waiting for it.
///
/// Waiting is not enough: PostgresNIO 1.33 can strand a query on a connection the server closed during a
/// fast shutdown (seen in `make faults`: an upload whose statement was in flight never returned, nor could
/// it be cancelled). So the operation runs in a task of its own and the request waits for whichever comes
/// first, its result or the watchdog's verdict; a stranded operation is abandoned (cancelled, and left to
/// end whenever PostgresNIO lets it). A write cut short this way was not acknowledged, but it may still
/// commit: the 503 means "outcome unknown" (uploads are idempotent on `(type, at)`, so re-sending is safe).
///
/// Operations that arrive while the database is already down never get here: `DatabaseAvailabilityMiddleware`
/// answers them at once.
struct OutageGuard: Sendable {
    let availability: DatabaseAvailability

    func guarding<Answer: Sendable>(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> Answer
    ) -> @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> Answer {
        let availability = availability
        return { request, body, metadata in
            // The operation's task inherits the request's task locals (RequestScope) and priority.
            let operation = Task { try await handler(request, body, metadata) }
            let first = FirstOutcome<Answer>()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    first.install(continuation)
                    let watcher = Task {
                        await availability.waitUntilUnreachable()
                        guard !Task.isCancelled else { return }
                        // The verdict first: cancelled first, the operation could end with its CancellationError
                        // and have that reach the client as a 500 before the 503 below (seen in the failover tests).
                        first.resume(with: .failure(Problem.databaseUnavailable))
                        operation.cancel()
                    }
                    Task {
                        let outcome = await operation.result
                        watcher.cancel()  // withdraws its wait, so waiters do not pile up between outages
                        first.resume(with: outcome)
                    }
                }
            } onCancel: {
                operation.cancel()
            }
        }
    }
}
