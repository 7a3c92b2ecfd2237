import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps monthly `samples` and `positions` partitions ready for the past two years and the next three months,
/// at start, then hourly (cheap when they exist: a catalogue look-up a month). A month's partition takes that
/// month's rows out of the default partition when it is made (0019 says why older months stay there).
/// Idempotent and serialised in the database, so several server instances can all run it.
package struct SamplePartitionMaintenance: Service {
    let client: DatabasePool
    let logger: Logger
    /// The server's clock: the months kept ready are counted from its day (UTC). A test moves it.
    let clock: WallClock

    package init(client: DatabasePool, logger: Logger, clock: WallClock = .system) {
        self.client = client
        self.logger = logger
        self.clock = clock
    }

    static let monthsBehind = 24
    static let monthsAhead = 3

    package func run() async throws {
        // Hourly rather than daily: a month that could not be made (a lock not had in time) is tried again soon.
        await repeatUntilShutdown(every: .seconds(60 * 60), logger: logger, failure: "sample partition maintenance failed") {
            try await maintain()
            return false
        }
    }

    /// One pass, one month at a time (each its own short transaction, never holding a lock for the whole
    /// window); returns how many partitions it created. A month that fails does not stop the others: the
    /// first failure is thrown once all were tried.
    @discardableResult
    func maintain() async throws -> Int {
        let today = clock.today
        let logger = logger
        var created = 0
        var failure: (any Error)?
        for offset in -Self.monthsBehind...Self.monthsAhead {
            let month = Self.month(offset, from: today)
            do {
                let made = try await client.withConnection { connection in
                    (try await SampleStore.ensurePartition(month: month, on: connection, logger: logger) ? 1 : 0)
                        + (try await PositionStore.ensurePartition(month: month, on: connection, logger: logger) ? 1 : 0)
                }
                created += made
            } catch {
                if Task.isCancelled { throw error }
                failure = failure ?? error
            }
        }
        if created > 0 { logger.info("created sample partitions", metadata: ["partitions.created": "\(created)"]) }
        if let failure { throw failure }
        return created
    }

    /// The first day of the month `offset` months from `day`'s.
    static func month(_ offset: Int, from day: CalendarDate) -> CalendarDate {
        let index = day.year * 12 + (day.month - 1) + offset
        return CalendarDate(year: index / 12, month: index % 12 + 1, day: 1)!
    }
}
