import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The monthly partitions of `samples`: made ahead by the migration, a default partition for the rest,
/// and `ensure_samples_partition` moving a month's rows out of the default one.
@Suite("Sample partitions", .serialized)
struct SamplePartitionTests {
    private static let partitionsQuery = """
        SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'samples'::regclass ORDER BY 1
        """

    private func partitions(_ harness: TestHarness) async throws -> Set<String> {
        Set(try await harness.sql(Self.partitionsQuery).map { try $0.decode(String.self) })
    }

    /// `samples_YYYY_MM` of the month `offset` months from the current one (UTC).
    private static func partitionName(monthsFromNow offset: Int, table: String = "samples") -> String {
        let (year, month) = month(fromNow: offset)
        return "\(table)_\(year)_\(String(format: "%02d", month))"
    }

    /// Year and month (1–12) of the month `offset` months from the current one (UTC).
    private static func month(fromNow offset: Int) -> (year: Int, month: Int) {
        let today = CalendarDate.today
        let index = today.year * 12 + (today.month - 1) + offset
        return (index / 12, index % 12 + 1)
    }

    private func partitionOf(_ harness: TestHarness, at: String) async throws -> [String] {
        try await harness.sql("SELECT tableoid::regclass::text FROM samples WHERE at = '\(at)'::timestamptz")
            .map { try $0.decode(String.self) }
    }

    @Test("after migration, the partitions of the current month, the 3 ahead and the 24 behind exist, and no others besides the default")
    func partitionsAfterMigration() async throws {
        try await TestHarness.run { harness in
            let names = try await partitions(harness)
            for offset in -24...3 {
                #expect(names.contains(Self.partitionName(monthsFromNow: offset)), "\(Self.partitionName(monthsFromNow: offset))")
            }
            #expect(!names.contains(Self.partitionName(monthsFromNow: 4)))
            #expect(!names.contains(Self.partitionName(monthsFromNow: -25)))
            #expect(names.contains("samples_default"))
            #expect(names.count == 28 + 1)
            // The maintenance the server runs at start and daily is idempotent on a migrated database.
            let created = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await SamplePartitionMaintenance(client: client, logger: TestDatabase.logger).maintain()
            }
            #expect(created == 0)
            #expect(try await partitions(harness) == names)
        }
    }

    @Test("a sample of today lands in this month's partition")
    func currentMonthPartition() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let today = CalendarDate.today.description + "T00:00:00Z"
            let response = try await harness.upload([("heart_rate", 70, today)], token: token)
            #expect(response.status == .ok)
            #expect(try await partitionOf(harness, at: today) == [Self.partitionName(monthsFromNow: 0)])
        }
    }

    @Test("a sample from 1999 lands in the default partition; ensure_samples_partition moves it into its month, same arrival, still readable")
    func defaultPartitionAndMove() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let june = "1999-06-15T10:00:00.5Z"
            let july = "1999-07-01T00:00:00Z"
            let upload = try await harness.upload(
                [("heart_rate", 71, "2026-03-01T08:00:00Z"), ("heart_rate", 70, june), ("weight", 60, july)], token: token)
            #expect(upload.status == .ok)
            #expect(try await partitionOf(harness, at: june) == ["samples_default"])
            #expect(try await partitionOf(harness, at: july) == ["samples_default"])
            let arrival = try await harness.int("SELECT arrival FROM samples WHERE at = '\(june)'")
            #expect(arrival == 2)

            #expect(try await harness.bool("SELECT ensure_samples_partition('1999-06-01')"))
            #expect(try await partitions(harness).contains("samples_1999_06"))
            #expect(try await partitionOf(harness, at: june) == ["samples_1999_06"])
            #expect(try await partitionOf(harness, at: july) == ["samples_default"])  // the next month stays
            #expect(try await harness.int("SELECT count(*) FROM samples_default WHERE at = '\(june)'") == 0)
            #expect(try await harness.int("SELECT arrival FROM samples WHERE at = '\(june)'") == arrival)
            #expect(try await harness.int("SELECT count(*) FROM samples") == 3)
            // A second call finds the partition and does nothing.
            #expect(try await harness.bool("SELECT ensure_samples_partition('1999-06-20')") == false)
            #expect(try await partitionOf(harness, at: june) == ["samples_1999_06"])

            // Still readable through the API, and still a duplicate when sent again.
            let list = try await harness.request(.get, "/v1/me/samples?to=1999-12-31T00:00:00Z", token: token)
            let items = try harness.object(list)["items"] as? [[String: Any]] ?? []
            #expect(items.map { $0["at"] as? String } == ["1999-06-15T10:00:00.5Z", "1999-07-01T00:00:00Z"])
            let again = try await harness.upload([("heart_rate", 75, june), ("heart_rate", 72, "1999-06-20T10:00:00Z")], token: token)
            #expect(try harness.object(again)["accepted"] as? Int == 1)
            #expect(try harness.object(again)["duplicates"] as? Int == 1)
            #expect(try await partitionOf(harness, at: "1999-06-20T10:00:00Z") == ["samples_1999_06"])
            #expect(try await harness.int("SELECT value::int8 FROM samples WHERE at = '\(june)'") == 70)
        }
    }

    @Test("the server's maintenance, on a clock five months on, makes the months ahead of it and moves their rows out of the defaults")
    func maintenanceBeyondTheHorizon() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser()
            let id = try await harness.accountID(token)
            // What a maintenance that did not run leaves behind: rows of a month past the migration's horizon in the
            // default partitions (written directly: an upload refuses times in the future); and an old month's row.
            let (year, month) = Self.month(fromNow: 5)
            let later = "\(year)-\(String(format: "%02d", month))-15T12:00:00Z"
            let old = "1999-06-15T10:00:00Z"
            for at in [later, old] {
                _ = try await harness.sql("INSERT INTO samples (user_id, type, at, value, arrival) VALUES ('\(id)', 1, '\(at)', 70, 1)")
                _ = try await harness.sql(
                    "INSERT INTO positions (user_id, at, latitude, longitude, arrival) VALUES ('\(id)', '\(at)', 45.46, 9.19, 1)")
            }
            #expect(try await partitionOf(harness, at: later) == ["samples_default"])
            #expect(try await harness.int("SELECT count(*) FROM positions_default") == 2)

            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .utc
            let fiveMonthsOn = try #require(calendar.date(byAdding: .month, value: 5, to: Date()))
            let created = try await TestDatabase.withClient(harness.databaseURL) { client in
                let maintenance = SamplePartitionMaintenance(client: client, logger: TestDatabase.logger, clock: .fixed(fiveMonthsOn))
                return (try await maintenance.maintain(), try await maintenance.maintain())
            }
            // Months +4 … +8, for both tables; the second pass finds nothing to do.
            #expect(created.0 == 2 * 5)
            #expect(created.1 == 0)
            let names = try await partitions(harness)
            for offset in 4...8 { #expect(names.contains(Self.partitionName(monthsFromNow: offset)), "\(offset)") }
            #expect(!names.contains(Self.partitionName(monthsFromNow: 9)))
            #expect(try await partitionOf(harness, at: later) == [Self.partitionName(monthsFromNow: 5)])
            // The missed month is out of the default partitions; a month outside the window stays there by design
            // (a partition per month back to 1900 would be one person's way to make thousands).
            #expect(try await harness.int("SELECT count(*) FROM samples_default WHERE at <> '\(old)'") == 0)
            #expect(try await harness.int("SELECT count(*) FROM positions_default WHERE at <> '\(old)'") == 0)
            #expect(try await partitionOf(harness, at: old) == ["samples_default"])
            #expect(!names.contains("samples_1999_06"))
            let positionsPartition = try await harness.sql("SELECT tableoid::regclass::text FROM positions WHERE at = '\(later)'")
                .map { try $0.decode(String.self) }
            #expect(positionsPartition == [Self.partitionName(monthsFromNow: 5, table: "positions")])
            #expect(try await harness.int("SELECT count(*) FROM samples") == 2)
        }
    }
}
