import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// A phone's upload is one statement with no transaction around it (`SampleStore.ingestAlone`). Its snapshot
/// is taken before it waits for the person's arrival lock; whenever someone held that lock meanwhile, the
/// statement undoes itself and the upload is stored again in a transaction, after the lock.
@Suite("Uploads in one statement")
struct UploadAloneTests {
    /// A change of zone rebuilds the person's rollups on the new days under the arrival lock. An upload that
    /// waited for it and then rolled its sample up on the zone its snapshot saw (UTC) would leave a rollup on
    /// a day the rebuilt ones do not use.
    @Test("an upload that waited for a change of zone rolls its samples up on the new zone's days")
    func waitsForAZoneChange() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let personID = try #require(UUID(uuidString: try await harness.accountID(token)))
            // 23:30 UTC is 00:30 of the next day in Rome (UTC+1 in March).
            let first = try await harness.request(
                .post, "/v1/me/samples", json: #"{"samples":[{"type":"heart_rate","value":60,"at":"2026-03-01T23:30:00Z"}]}"#, token: token)
            try #require(first.status == .ok, "\(harness.text(first))")
            let upload = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    #expect(
                        try await TimeZoneStore.setTimeZone(
                            "Europe/Rome", for: personID, onlyIfUnknown: false, on: connection, logger: TestDatabase.logger))
                    let upload = Task {
                        try await harness.requestOnNewConnection(
                            .post, "/v1/me/samples", json: #"{"samples":[{"type":"heart_rate","value":70,"at":"2026-03-01T23:40:00Z"}]}"#,
                            token: token)
                    }
                    // The upload's statement has begun and waits for the lock this transaction holds.
                    try await Self.untilAStatementWaitsForALock(harness)
                    #expect(try await harness.int("SELECT count(*) FROM samples") == 1)
                    return upload
                }
            }
            let (status, body) = try await upload.value
            #expect(status == .ok, "\(body)")
            #expect(body.contains(#""accepted":1"#), "\(body)")
            #expect(try await harness.int(ConsistencyChecks.rollupMismatches) == 0)
            #expect(
                try await harness.sql("SELECT day::text || ' ' || count FROM daily_rollups").map { try $0.decode(String.self) } == ["2026-03-02 2"])
        }
    }

    /// Two uploads of one person at once: whichever waits is stored after the other, with the next arrival
    /// numbers (as in a transaction, the repeat of a stored sample takes one too: 4 here, and 7 is 5).
    @Test("an upload that waited for another of the same person takes the next arrival numbers and counts its repeats")
    func waitsForAnotherUpload() async throws {
        try await TestHarness.run { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let personID = try #require(UUID(uuidString: try await harness.accountID(token)))
            try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: token)
            let upload = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    let held = try await SampleStore.ingest(
                        [5, 6].map { Sample(type: .heartRate, value: 70, at: Timestamp.parse(TestHarness.time(minutes: $0))!) }, for: personID,
                        on: connection, logger: TestDatabase.logger)
                    #expect(held.accepted == 2)
                    let upload = Task {
                        try await harness.requestOnNewConnection(
                            .post, "/v1/me/samples",
                            json: #"{"samples":[{"type":"heart_rate","value":70,"at":"\#(TestHarness.time(minutes: 6))"},"#
                                + #"{"type":"heart_rate","value":71,"at":"\#(TestHarness.time(minutes: 7))"}]}"#, token: token)
                    }
                    try await Self.untilAStatementWaitsForALock(harness)
                    return upload
                }
            }
            let (status, body) = try await upload.value
            #expect(status == .ok, "\(body)")
            #expect(body.contains(#""accepted":1"#) && body.contains(#""duplicates":1"#), "\(body)")
            #expect(
                try await harness.sql("SELECT arrival::text FROM samples ORDER BY arrival").map { try $0.decode(String.self) } == [
                    "1", "2", "3", "5",
                ])
            #expect(
                try await harness.sql("SELECT last_arrival::text FROM sample_batches ORDER BY last_arrival").map { try $0.decode(String.self) } == [
                    "1", "3", "5",
                ])
            #expect(try await harness.int("SELECT last_arrival FROM sample_arrivals") == 5)
            #expect(try await harness.int(ConsistencyChecks.rollupMismatches) == 0)
        }
    }

    /// PostgresNIO keeps a statement whose preparation failed for the connection's life and answers every
    /// later execute of it with that error. The first upload on a connection prepares the upload statement;
    /// here its Parse waits behind a table lock until `lock_timeout`. That upload is a 503; the next one, on
    /// the pool's only connection, must be stored (before the connection was dropped on such an error, it
    /// was a 503 for as long as the connection lived).
    @Test("an upload whose statement could not be prepared fails alone: the next ones on the pool are stored")
    func aFailedPreparationIsNotKept() async throws {
        try await TestHarness.run(configure: Self.onePooledConnection) { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let upload = #"{"samples":[{"type":"heart_rate","value":60,"at":"\#(TestHarness.time(minutes: 0))"}]}"#
            let blocked = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    try await connection.query("LOCK TABLE sample_arrivals IN ACCESS EXCLUSIVE MODE", logger: TestDatabase.logger)
                    return try await harness.request(.post, "/v1/me/samples", json: upload, token: token)
                }
            }
            #expect(blocked.status == .serviceUnavailable, "\(harness.text(blocked))")
            for minute in 1...3 {
                let next = try await harness.request(
                    .post, "/v1/me/samples", json: #"{"samples":[{"type":"heart_rate","value":60,"at":"\#(TestHarness.time(minutes: minute))"}]}"#,
                    token: token)
                #expect(next.status == .ok, "upload \(minute): \(harness.text(next))")
            }
            #expect(try await harness.int("SELECT count(*) FROM samples") == 3)
        }
    }

    /// The other side of that rule: once the statements have run on a connection, a failure of theirs is
    /// their execution's (here a lock timeout, as under load), and the connection is kept. Closing it would
    /// turn each 503 of an overload into a reconnection and fresh preparations.
    @Test("an upload statement that ran before and then times out on a lock keeps its pooled connection")
    func anExecutionFailureKeepsTheConnection() async throws {
        try await TestHarness.run(configure: Self.onePooledConnection) { harness in
            let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
            let personID = try #require(UUID(uuidString: try await harness.accountID(token)))
            @Sendable func upload(_ minute: Int) async throws -> TestResponse {
                try await harness.request(
                    .post, "/v1/me/samples", json: #"{"samples":[{"type":"heart_rate","value":60,"at":"\#(TestHarness.time(minutes: minute))"}]}"#,
                    token: token)
            }
            // The server's backends but the database watchdog's (whose statement is its probe): the pool's one connection.
            let uploader = """
                SELECT pid FROM pg_stat_activity
                WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
                  AND query NOT LIKE 'SELECT pg_is_in_recovery()%'
                """
            #expect(try await upload(0).status == .ok)
            let before = try await harness.sql(uploader).map { try $0.decode(Int32.self) }
            try #require(before.count == 1, "\(before)")
            let blocked = try await TestDatabase.withClient(harness.databaseURL) { client in
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    try await connection.query(
                        "SELECT 1 FROM sample_arrivals WHERE user_id = \(personID) FOR UPDATE", logger: TestDatabase.logger)
                    return try await upload(1)
                }
            }
            #expect(blocked.status == .serviceUnavailable, "\(harness.text(blocked))")
            #expect(try await upload(2).status == .ok)
            #expect(try await harness.sql(uploader).map { try $0.decode(Int32.self) } == before)
        }
    }

    /// One pooled connection, so the next upload meets the connection the last one left, and a short lock wait.
    @Sendable static func onePooledConnection(_ configuration: inout BrokerConfiguration) {
        configuration.database.poolSize = 1
        configuration.database.lockTimeout = .milliseconds(300)
    }

    /// Waits (polling, at most 10 s) until a statement of the test's database waits for a lock: the upload
    /// under test has taken its snapshot and stands behind the lock the test holds.
    static func untilAStatementWaitsForALock(_ harness: TestHarness) async throws {
        for _ in 0..<500 {
            let waiting = try await harness.int(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
            if waiting > 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no statement waited for a lock within 10 s")
    }
}
