import Logging
import PostgresStatements
import ServiceLifecycle

/// The background loops' common shape: do `work` until it says nothing is left, sleep `pause`, again,
/// until graceful shutdown (which also cancels the sleep, so the server never waits for it). A failure is
/// logged and tried again after the pause: the database may be down or behind, which must not stop the server.
///
/// The shutdown waits at most `stopBound` for a unit of work under way, then abandons it with a warning:
/// work stuck where cancellation cannot reach it (PostgresNIO 1.33 can leave an await on a connection that
/// closed under it unanswered; `StrandedStatements` covers its statements) would otherwise hold the server's
/// stop for ever. Work that ends within the bound, as a mail delivery recording what it sent, is waited for.
///
/// - Parameter work: one unit of work; true when there may be more to do at once.
func repeatUntilShutdown(
    every pause: Duration, logger: Logger, failure: Logger.Message, stopBound: Duration = .seconds(15),
    _ work: @escaping @Sendable () async throws -> Bool
) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                while !Task.isCancelled, try await abandonedAfterCancellation(within: stopBound, work) {}
            } catch is AbandonedAtShutdown {
                logger.warning("background work did not stop within its bound at shutdown and was abandoned", metadata: ["bound": "\(stopBound)"])
                break
            } catch {
                // A shutdown cancels the work wherever it is; what it throws then (a CancellationError, or
                // a transaction error wrapping one) is the stop, not a failure, and not worth a warning.
                if Task.isCancelled { break }
                logger.warning(failure, metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: pause)
        }
    }
}

/// Runs `work` in a task of its own and returns its outcome. Once the caller is cancelled, `work` is
/// cancelled too and waited for at most `bound` more; past it, this throws `AbandonedAtShutdown` and leaves
/// `work` to end whenever it can.
func abandonedAfterCancellation<T: Sendable>(within bound: Duration, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
    let first = FirstOutcome<T>()
    let task = Task {
        do { first.resume(with: .success(try await work())) } catch { first.resume(with: .failure(error)) }
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { first.install($0) }
    } onCancel: {
        task.cancel()
        Task {
            try? await Task.sleep(for: bound)
            first.resume(with: .failure(AbandonedAtShutdown()))
        }
    }
}

/// Work still running `stopBound` after its loop was told to stop.
struct AbandonedAtShutdown: Error {}
