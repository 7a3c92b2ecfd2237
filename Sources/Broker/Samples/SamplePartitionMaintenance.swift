import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps monthly `samples` partitions ready for the past two years and the next three months: at start,
/// then daily. Idempotent SQL, so several server instances can all run it.
struct SamplePartitionMaintenance: Service {
    let client: DatabasePool
    let logger: Logger

    func run() async throws {
        let client = client, logger = logger
        await repeatUntilShutdown(every: .seconds(24 * 60 * 60), logger: logger, failure: "sample partition maintenance failed") {
            let created = try await client.query("SELECT ensure_samples_partitions(24, 3)", logger: logger)
                .collect().first?.decode(Int.self) ?? 0
            if created > 0 { logger.info("created sample partitions", metadata: ["partitions.created": "\(created)"]) }
            return false
        }
    }
}
