import PostgresNIO
import Synchronization

/// Passes a leased connection from the task that waited for it (in PostgresNIO's queue) to the caller, and
/// back when the caller is done. Either side may give up first: the caller on time-out or cancellation
/// (`abandon`), the leasing task when the pool fails; whichever comes second sees it and does not wait.
final class LeaseHandoff: Sendable {
    private enum State {
        case waiting
        case caller(CheckedContinuation<PostgresConnection, any Error>)
        case offered(PostgresConnection)
        case taken
        case abandoned(any Error)
    }

    private struct Return {
        var done = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State.waiting)
    private let returned = Mutex(Return())

    /// The caller's side: the connection once it is leased, or the reason it never will be.
    func take() async throws -> PostgresConnection {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<PostgresConnection, any Error>? = state.withLock { state in
                switch state {
                case .waiting:
                    state = .caller(continuation)
                    return nil
                case .offered(let connection):
                    state = .taken
                    return .success(connection)
                case .abandoned(let error):
                    return .failure(error)
                case .caller, .taken:
                    preconditionFailure("a lease handoff is taken once")
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The leasing task's side: false when the caller has given up (the connection goes straight back).
    func offer(_ connection: PostgresConnection) -> Bool {
        let (accepted, caller): (Bool, CheckedContinuation<PostgresConnection, any Error>?) = state.withLock { state in
            switch state {
            case .waiting:
                state = .offered(connection)
                return (true, nil)
            case .caller(let continuation):
                state = .taken
                return (true, continuation)
            case .abandoned, .offered, .taken:
                return (false, nil)
            }
        }
        caller?.resume(returning: connection)
        return accepted
    }

    /// Gives up on the lease with `error` unless the caller already has the connection; true if it did.
    @discardableResult
    func abandon(_ error: any Error) -> Bool {
        let (abandoned, caller, wasOffered): (Bool, CheckedContinuation<PostgresConnection, any Error>?, Bool) = state.withLock { state in
            switch state {
            case .waiting:
                state = .abandoned(error)
                return (true, nil, false)
            case .caller(let continuation):
                state = .abandoned(error)
                return (true, continuation, false)
            case .offered:
                state = .abandoned(error)
                return (true, nil, true)
            case .taken, .abandoned:
                return (false, nil, false)
            }
        }
        caller?.resume(throwing: error)
        if wasOffered { giveBack() }  // the leasing task waits for a return that will not come otherwise
        return abandoned
    }

    /// The caller is done with the connection.
    func giveBack() {
        let waiter = returned.withLock { returned in
            returned.done = true
            defer { returned.waiter = nil }
            return returned.waiter
        }
        waiter?.resume()
    }

    /// The leasing task keeps the lease until the caller gives it back. Deliberately deaf to cancellation:
    /// the caller may still be using the connection.
    func waitUntilReturned() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = returned.withLock { returned in
                if !returned.done { returned.waiter = continuation }
                return returned.done
            }
            if done { continuation.resume() }
        }
    }
}
