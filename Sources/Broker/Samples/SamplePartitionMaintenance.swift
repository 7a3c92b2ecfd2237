import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps monthly `samples` and `positions` partitions ready for the past two years and the next three months: at start,
/// then daily. Idempotent SQL, so several server instances can all run it.
struct SamplePartitionMaintenance: Service {
    let client: DatabasePool
    let logger: Logger

    func run() async throws {
        let client = client
        let logger = logger
        await repeatUntilShutdown(every: .seconds(24 * 60 * 60), logger: logger, failure: "sample partition maintenance failed") {
            let created = try await client.withConnection {
                try await SampleStore.ensurePartitions(monthsBehind: 24, monthsAhead: 3, on: $0, logger: logger)
                    + PositionStore.ensurePartitions(monthsBehind: 24, monthsAhead: 3, on: $0, logger: logger)
            }
            if created > 0 { logger.info("created sample partitions", metadata: ["partitions.created": "\(created)"]) }
            return false
        }
    }
}
