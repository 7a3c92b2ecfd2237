import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps monthly `samples` and `positions` partitions ready for the past two years and the next three months,
/// at start, then daily; a month's partition takes that month's rows out of the default partition when it is
/// made (0019 says why older months stay there). Idempotent SQL, so several server instances can all run it.
struct SamplePartitionMaintenance: Service {
    let client: DatabasePool
    let logger: Logger
    /// The server's clock: the months kept ready are counted from its day (UTC). A test moves it.
    var now: @Sendable () -> Date = { Date() }

    static let monthsBehind = 24
    static let monthsAhead = 3

    func run() async throws {
        await repeatUntilShutdown(every: .seconds(24 * 60 * 60), logger: logger, failure: "sample partition maintenance failed") {
            try await maintain()
            return false
        }
    }

    /// One pass of the maintenance; returns how many partitions it created.
    @discardableResult
    func maintain() async throws -> Int {
        let today = CalendarDate(now(), in: .utc)
        let logger = logger
        let created = try await client.withConnection {
            try await SampleStore.ensurePartitions(
                around: today, monthsBehind: Self.monthsBehind, monthsAhead: Self.monthsAhead, on: $0, logger: logger)
                + PositionStore.ensurePartitions(
                    around: today, monthsBehind: Self.monthsBehind, monthsAhead: Self.monthsAhead, on: $0, logger: logger)
        }
        if created > 0 { logger.info("created sample partitions", metadata: ["partitions.created": "\(created)"]) }
        return created
    }
}
