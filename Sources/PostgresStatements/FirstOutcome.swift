import Synchronization

/// Resumes a continuation once, with the first outcome offered: for waiting on whichever of several
/// unstructured tasks finishes first, without waiting for the others (which may never finish).
///
/// An outcome offered before the continuation is installed is kept and delivered as it is installed: the
/// work may be started first and finish at once (a statement answered before its caller began to wait
/// would otherwise be lost, and its caller wait for ever).
public final class FirstOutcome<Value: Sendable>: Sendable {
    public init() {}

    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var early: Result<Value, any Error>?
        var done = false
    }

    private let state = Mutex(State())

    public func install(_ continuation: CheckedContinuation<Value, any Error>) {
        let early = state.withLock { state -> Result<Value, any Error>? in
            guard let early = state.early else {
                state.continuation = continuation
                return nil
            }
            state.early = nil
            return early
        }
        if let early { continuation.resume(with: early) }
    }

    public func resume(with outcome: Result<Value, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard !state.done else { return nil }
            state.done = true
            guard let continuation = state.continuation else {
                state.early = outcome
                return nil
            }
            state.continuation = nil
            return continuation
        }
        continuation?.resume(with: outcome)
    }
}
