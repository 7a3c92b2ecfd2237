import Logging
import ServiceLifecycle

/// The background loops' common shape: do `work` until it says nothing is left, sleep `pause`, again,
/// until graceful shutdown (which also cancels the sleep, so the server never waits for it). A failure is
/// logged and tried again after the pause: the database may be down or behind, which must not stop the server.
///
/// - Parameter work: one unit of work; true when there may be more to do at once.
func repeatUntilShutdown(
    every pause: Duration, logger: Logger, failure: Logger.Message, _ work: @escaping @Sendable () async throws -> Bool
) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                while !Task.isCancelled, try await work() {}
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
