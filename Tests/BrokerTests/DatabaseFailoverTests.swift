import Foundation
import HTTPTypes
import Logging
import NIOCore
import PostgresNIO
import Testing

@testable import BrokerDomain

/// Issue 34: a `DATABASE_URL` with several hosts (libpq's form), and a server that follows its database to
/// another host when the one it uses is lost or stops accepting writes, answering 503 with `Retry-After`
/// meanwhile, never a 500 and never a hang. The real failover (pg_auto_failover promoting a standby) is
/// `make faults FAULTS_ONLY=failover`; here a relay process stands for a host that can be killed, and a
/// database set read-only for a primary that was demoted.
@Suite("A database on several hosts: the server follows a failover (issue 34)")
struct DatabaseFailoverTests {
    static let logger = Logger(label: "test")

    /// What a server logs through an outage of its host: the watchdog's error, and a warning from each
    /// background loop that was working when its connection went or its write was refused (which loops, and
    /// how often, depends on the timing); each tries again later. Nothing else may be logged.
    static let outageLogs: [ExpectedLog] = [
        .error("database unreachable"), .warning("no database host will do"), .warning("sqlState: 25006"), .warning("sqlState: 57P01"),
        .warning("serverClosedConnection"), .warning("clientClosedConnection"), .warning("connectionError"), .warning("uncleanShutdown"),
        .warning("no database connection became free"), .warning("the database connection closed before the statement was answered"),
    ]

    @Test("DATABASE_URL takes libpq's host list and target_session_attrs, and refuses a malformed one")
    func hostList() throws {
        let url = try DatabaseURL(
            "postgres://d4h:p%40ss@10.0.0.1:5433,db2,[::1]:6000/d4h?sslmode=disable&target_session_attrs=read-write")
        #expect(
            url.hosts == [
                DatabaseHost(host: "10.0.0.1", port: 5433), DatabaseHost(host: "db2", port: 5432), DatabaseHost(host: "::1", port: 6000),
            ])
        #expect(url.username == "d4h" && url.password == "p@ss" && url.database == "d4h")
        #expect(url.sslMode == .disable && url.targetSessionAttributes == .readWrite)
        #expect(try DatabaseURL(url.text) == url)
        #expect(url.text == "postgres://d4h:p%40ss@10.0.0.1:5433,db2:5432,[::1]:6000/d4h?sslmode=disable&target_session_attrs=read-write")

        let single = try DatabaseURL("postgres://u:p@127.0.0.1:54339/postgres?sslmode=disable")
        #expect(single.hosts == [DatabaseHost(host: "127.0.0.1", port: 54339)] && single.targetSessionAttributes == .any)
        #expect(single.text == "postgres://u:p@127.0.0.1:54339/postgres?sslmode=disable")

        // Several hosts and no target_session_attrs: what the server's own URL gets is read-write, not libpq's
        // `any`, which would let it settle on a standby that refuses every write.
        #expect(try DatabaseURL("postgres://u:p@h1,h2/db", severalHosts: .readWrite).targetSessionAttributes == .readWrite)
        #expect(try DatabaseURL("postgres://u:p@h1/db", severalHosts: .readWrite).targetSessionAttributes == .any)
        // A password with a '/' is cut there and read as hosts; the error must not quote it.
        do {
            _ = try DatabaseURL("postgres://d4h:Pa55/word@h1,h2/db", variable: "DATABASE_READ_URL")
            Issue.record("a malformed URL was accepted")
        } catch {
            #expect(!"\(error)".contains("Pa55") && "\(error)".contains("DATABASE_READ_URL"), "\(error)")
        }

        for malformed in [
            "postgres://u:p@h1,,h2/db", "postgres://u:p@h1,/db", "postgres://u:p@h1:0/db", "postgres://u:p@h1:x/db", "postgres://u:p@/db",
            "postgres://u:p@[::1/db", "postgres://u:p@h1:5432,h2:99999/db", "postgres://u:p@h1/db?target_session_attrs=writable",
            "mysql://u:p@h/db", "postgres://h1,h2/db", "postgres://u:p@h1,h2/",
        ] {
            #expect(throws: ConfigurationError.self, "\(malformed)") { try DatabaseURL(malformed) }
        }
    }

    @Test("the host selected is the first that answers as target_session_attrs asks: a dead host and a read-only one are passed over")
    func selection() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            // Port 1: nothing listens there, so it refuses at once, as a lost machine's port does.
            var several = url
            several.hosts = [DatabaseHost(host: "127.0.0.1", port: 1)] + url.hosts
            several.targetSessionAttributes = .readWrite
            #expect(await HostSelection(url: several, logger: Self.logger).select() == url.hosts[0])
            several.targetSessionAttributes = .any
            #expect(await HostSelection(url: several, logger: Self.logger).select() == url.hosts[0], "a dead host does not do for `any`")

            // A primary that accepts no writes by default: what libpq's read-write check passes over.
            try await Self.setReadOnly(url, true)
            let expected: [(TargetSessionAttributes, DatabaseHost?)] = [
                (.readWrite, nil), (.readOnly, url.hosts[0]), (.primary, url.hosts[0]), (.standby, nil), (.preferStandby, url.hosts[0]),
                (.any, url.hosts[0]),
            ]
            for (attributes, host) in expected {
                several.targetSessionAttributes = attributes
                #expect(await HostSelection(url: several, logger: Self.logger).select() == host, "\(attributes.rawValue)")
            }
            try await Self.setReadOnly(url, false)
        }
    }

    @Test(
        "a server whose host is lost moves to the next: 503 with Retry-After meanwhile, never a 500 or a hang, every acknowledged upload kept",
        .timeLimit(.minutes(3)))
    func followsALostHost() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let relay = try await TCPRelay.start(to: url.hosts[0])
            var several = url
            several.hosts = [relay.host] + url.hosts
            several.targetSessionAttributes = .readWrite
            do {
                try await TestHarness.run(
                    databaseURL: several, expectedLogs: Self.outageLogs
                ) { harness in
                    let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
                    var uploads = Uploads()
                    for _ in 0..<5 { try await uploads.send(harness, token: token) }
                    #expect(uploads.acknowledged.count == 5)

                    // The relay, the host the server chose first, goes; uploads go on until ten in a row succeed.
                    await relay.kill()
                    let deadline = ContinuousClock.now + .seconds(60)
                    var inARow = 0
                    while inARow < 10, ContinuousClock.now < deadline {
                        inARow = try await uploads.send(harness, token: token) ? inARow + 1 : 0
                        if inARow == 0 { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    #expect(inARow == 10, "the server did not move to the second host within 60 s: \(uploads.statuses)")
                    #expect(uploads.unexpected.isEmpty, "every answer is 200, or 503 with Retry-After: \(uploads.unexpected)")
                    try await uploads.expectStored(in: url)
                }
            } catch {
                await relay.stop()
                throw error
            }
            await relay.stop()
        }
    }

    @Test(
        "a host that stops accepting writes (a demoted primary) is 503 with Retry-After, never a 500, until it accepts them again",
        .timeLimit(.minutes(3)))
    func followsADemotion() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            var readWrite = url
            readWrite.targetSessionAttributes = .readWrite
            try await TestHarness.run(databaseURL: readWrite, expectedLogs: Self.outageLogs) { harness in
                let token = try await harness.activeUser(.init(fiscalCode: TestHarness.uniqueFiscalCode()))
                var uploads = Uploads()
                for _ in 0..<3 { try await uploads.send(harness, token: token) }

                // What a demotion does to a session: the server restarts as a standby, dropping every connection,
                // and new sessions are read-only.
                try await Self.setReadOnly(url, true)
                try await Self.dropSessions(of: url)
                var deadline = ContinuousClock.now + .seconds(30)
                var refused = false
                while !refused, ContinuousClock.now < deadline {
                    refused = try await !uploads.send(harness, token: token)
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(refused, "writes were still accepted 30 s after the database became read-only")

                try await Self.setReadOnly(url, false)
                try await Self.dropSessions(of: url)
                deadline = ContinuousClock.now + .seconds(30)
                var inARow = 0
                while inARow < 5, ContinuousClock.now < deadline {
                    inARow = try await uploads.send(harness, token: token) ? inARow + 1 : 0
                    if inARow == 0 { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(inARow == 5, "writes were not accepted again within 30 s: \(uploads.statuses)")
                #expect(uploads.unexpected.isEmpty, "every answer is 200, or 503 with Retry-After: \(uploads.unexpected)")
                try await uploads.expectStored(in: url)
            }
        }
    }

    @Test("a lease waiting for a connection when the pool moves is served by the new host, not failed with the old client", .timeLimit(.minutes(2)))
    func leaseWaitingDuringAMove() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let relay = try await TCPRelay.start(to: url.hosts[0])
            var several = url
            several.hosts = [relay.host] + url.hosts
            var limits = DatabaseLimits()
            limits.poolSize = 1
            let logger = Self.logger
            let pool = DatabasePool(url: several, host: relay.host, limits: limits, logger: logger)
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await pool.run() }
                    defer { group.cancelAll() }
                    // The one connection, held by a long statement through the relay.
                    let (holding, held) = AsyncStream.makeStream(of: Void.self)
                    let holder = Task {
                        try? await pool.withConnection { connection in
                            held.yield()
                            _ = try await connection.query("SELECT pg_sleep(30)", logger: logger).collect()
                        }
                    }
                    for await _ in holding { break }
                    // A lease that waits long (as the record of a sent download does) queues behind it.
                    let waiting = Task {
                        try await pool.withConnection(waitingAtMost: .seconds(60)) { connection in
                            try await connection.query("SELECT 1", logger: logger).collect().count
                        }
                    }
                    try await Task.sleep(for: .milliseconds(200))
                    pool.move(to: url.hosts[0])
                    // Without the lease moving too, it would wait in the old client's queue until that client is
                    // retired, and then fail.
                    #expect(try await waiting.value == 1)
                    #expect(pool.host == url.hosts[0])
                    holder.cancel()
                }
            } catch {
                await relay.stop()
                throw error
            }
            await relay.stop()
        }
    }

    /// Sets whether new sessions of `url`'s database are read-only (from another database: a session of a
    /// read-only one cannot change it back).
    static func setReadOnly(_ url: DatabaseURL, _ readOnly: Bool) async throws {
        try await TestDatabase.runAdmin(
            try TestDatabase.adminURL,
            "ALTER DATABASE \(url.database) " + (readOnly ? "SET default_transaction_read_only = on" : "RESET default_transaction_read_only"))
    }

    /// Ends every session on `url`'s database but the caller's.
    static func dropSessions(of url: DatabaseURL) async throws {
        try await TestDatabase.runAdmin(
            url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
    }

    /// One heart-rate sample per upload, each at its own second, and what each upload was answered.
    struct Uploads {
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        var acknowledged: [Int] = []
        var statuses: [Int] = []
        var unexpected: [String] = []

        /// Sends the next sample: true when it was acknowledged (200); a 503 must say when to try again.
        mutating func send(_ harness: TestHarness, token: String) async throws -> Bool {
            let second = statuses.count
            let at = ISO8601DateFormatter().string(from: start.addingTimeInterval(Double(second)))
            // Each on a connection of its own, as a client retrying after a 503 may: the server may close the one
            // a cut-short request came on (its body unread), and the next request on it would fail in the client.
            let response = try await harness.sendOnNewConnection(
                .post, "/v1/me/samples", headers: [.contentType: "application/json", .authorization: "Bearer \(token)"],
                body: ByteBuffer(string: #"{"samples":[{"type":"heart_rate","value":70,"at":"\#(at)"}]}"#))
            statuses.append(response.status.code)
            switch response.status.code {
            case 200:
                acknowledged.append(second)
                return true
            case 503 where response.headers[.retryAfter] != nil:
                return false
            default:
                unexpected.append("\(response.status.code): \(String(buffer: response.body ?? ByteBuffer()))")
                return false
            }
        }

        /// Every acknowledged sample is in the database.
        func expectStored(in url: DatabaseURL) async throws {
            let stored = try await TestDatabase.withClient(url) { client in
                try await client.query("SELECT extract(epoch FROM at)::bigint FROM samples", logger: DatabaseFailoverTests.logger)
                    .rows.map { try $0.decode(Int64.self) }
            }
            let storedSeconds = Set(stored.map { Int($0 - Int64(start.timeIntervalSince1970)) })
            let lost = acknowledged.filter { !storedSeconds.contains($0) }
            #expect(lost.isEmpty, "acknowledged but not stored: \(lost)")
        }
    }
}
