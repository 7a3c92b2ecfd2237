import Synchronization

/// Resumes a continuation once, with the first outcome offered: for waiting on whichever of several
/// unstructured tasks finishes first, without waiting for the others (which may never finish).
package final class FirstOutcome<Value: Sendable>: Sendable {
    package init() {}

    private let state = Mutex<(continuation: CheckedContinuation<Value, any Error>?, done: Bool)>((nil, false))

    package func install(_ continuation: CheckedContinuation<Value, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    package func resume(with outcome: Result<Value, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard !state.done else { return nil }
            state.done = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: outcome)
    }
}
