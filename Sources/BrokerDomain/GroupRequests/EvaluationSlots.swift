import Foundation
import Synchronization

/// Admits at most `slots` group evaluations at once, taking waiting companies in turn.
///
/// An evaluation sorts up to millions of person-days: a burst of them, all admitted, would take every
/// pooled connection and both cores, and every other request would queue behind them (issue 14). With
/// this, the rest of the pool stays free for the rest of the API. Waiting is fair between companies: when a
/// slot frees, it goes to the company that was served longest ago, so one company's 30 requests do not
/// queue another's one. A wait is bounded by `timeout`; past it the caller gets `EvaluationsBusy` (503
/// with `Retry-After`).
package final class EvaluationSlots: Sendable {
    private struct Waiter {
        let id: UUID
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var free: Int
        /// Waiters per company, oldest first.
        var queues: [UUID: [Waiter]] = [:]
        /// Companies with waiters, in the order they are to be served.
        var turn: [UUID] = []
    }

    package let slots: Int
    package let timeout: Duration
    private let state: Mutex<State>

    package init(slots: Int, timeout: Duration) {
        precondition(slots >= 1)
        self.slots = slots
        self.timeout = timeout
        self.state = Mutex(State(free: slots))
    }

    /// Runs `work` in a slot, on behalf of `company` (the background refresh passes the subscription's).
    package func withSlot<T>(for company: UUID, _ work: () async throws -> T) async throws -> T {
        try await acquire(for: company)
        defer { release() }
        return try await work()
    }

    /// Callers waiting for a slot (for tests that line waiters up in a known order).
    var waiting: Int { state.withLock { $0.queues.values.reduce(0) { $0 + $1.count } } }

    private func acquire(for company: UUID) async throws {
        let id = UUID()
        let timer = Task { [timeout] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self.withdraw(id, company: company, error: EvaluationsBusy(waited: timeout))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Under the lock `withdraw` takes too: a task cancelled before this point (its handler found
                // nothing to withdraw) is never queued.
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.free > 0 && state.turn.isEmpty {
                        state.free -= 1
                        return .success(())
                    }
                    if state.queues[company] == nil { state.turn.append(company) }
                    state.queues[company, default: []].append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            withdraw(id, company: company, error: CancellationError())
        }
    }

    /// Takes a waiter out of the queue (time-out or cancellation) and fails it; nothing if it was admitted.
    private func withdraw(_ id: UUID, company: UUID, error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard var queue = state.queues[company], let index = queue.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = queue.remove(at: index)
            if queue.isEmpty {
                state.queues[company] = nil
                state.turn.removeAll { $0 == company }
            } else {
                state.queues[company] = queue
            }
            return waiter
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// Hands the slot to the oldest waiter of the next company in turn, or frees it.
    private func release() {
        let next = state.withLock { state -> Waiter? in
            guard !state.turn.isEmpty else {
                state.free += 1
                return nil
            }
            let company = state.turn.removeFirst()
            var queue = state.queues[company]!
            let waiter = queue.removeFirst()
            if queue.isEmpty {
                state.queues[company] = nil
            } else {
                state.queues[company] = queue
                state.turn.append(company)  // its next waiter goes to the back of the line of companies
            }
            return waiter
        }
        next?.continuation.resume()
    }
}
