import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// Answers 503 for an operation that was under way when the database went away, instead of waiting for it.
///
/// Waiting is not enough: PostgresNIO 1.33 can strand a query on a connection the server closed during a
/// fast shutdown (seen in `make faults`: an upload whose statement was in flight never returned, nor could
/// it be cancelled). So the operation runs in a task of its own and the request waits for whichever comes
/// first, its result or the watchdog's verdict; a stranded operation is abandoned (cancelled, and left to
/// end whenever PostgresNIO lets it). A write cut short this way was not acknowledged, and retrying it is safe
/// (uploads are idempotent on `(type, at)`).
///
/// Operations that arrive while the database is already down never get here: `DatabaseAvailabilityMiddleware`
/// answers them at once.
struct OutageGuard: Sendable {
    let availability: DatabaseAvailability

    func guarding(_ handler: @escaping StreamingEndpoints.Handler) -> StreamingEndpoints.Handler {
        let availability = availability
        return { request, body, metadata in
            // The operation's task inherits the request's task locals (RequestScope) and priority.
            let operation = Task { try await handler(request, body, metadata) }
            let first = FirstOutcome<(HTTPResponse, HTTPBody?)>()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    first.install(continuation)
                    let watcher = Task {
                        await availability.waitUntilUnreachable()
                        guard !Task.isCancelled else { return }
                        operation.cancel()
                        first.resume(with: .failure(Problem.databaseUnavailable))
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

/// Resumes a continuation once, with the first outcome offered.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Value, any Error>?, done: Bool)>((nil, false))

    func install(_ continuation: CheckedContinuation<Value, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func resume(with outcome: Result<Value, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: outcome)
    }
}
