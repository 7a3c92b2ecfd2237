import Logging
import ServiceLifecycle

/// Announces expired subscriptions (audit event, `subscription.ended` webhook) shortly after `endsAt`.
/// Expiry takes effect without it: every read computes it from time.
struct SubscriptionExpiry: Service {
    let requests: SingleRequestService
    let logger: Logger
    var interval: Duration = .seconds(30)

    func run() async throws {
        // Shutdown cancels the sleep, so the server never waits for it.
        await cancelWhenGracefulShutdown { await announceRepeatedly() }
    }

    private func announceRepeatedly() async {
        while !Task.isCancelled {
            do {
                while try await requests.announceExpiries(logger: logger) > 0 {}
            } catch {
                logger.warning("announcing expired subscriptions failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
