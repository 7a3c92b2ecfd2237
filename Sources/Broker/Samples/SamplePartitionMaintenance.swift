import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps monthly `samples` partitions ready for the past two years and the next three months: at start,
/// then daily. Idempotent SQL, so several server instances can all run it.
struct SamplePartitionMaintenance: Service {
    let client: PostgresClient
    let logger: Logger

    func run() async throws {
        // Shutdown cancels the daily sleep, so the server never waits for it.
        await cancelWhenGracefulShutdown { await maintainDaily() }
    }

    private func maintainDaily() async {
        while !Task.isCancelled {
            do {
                let created = try await client.query("SELECT ensure_samples_partitions(24, 3)", logger: logger)
                    .collect().first?.decode(Int.self) ?? 0
                if created > 0 { logger.info("created sample partitions", metadata: ["partitions.created": "\(created)"]) }
            } catch {
                // The database may be down or behind; try again later rather than stop the server.
                logger.warning("sample partition maintenance failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: .seconds(24 * 60 * 60))
        }
    }
}
