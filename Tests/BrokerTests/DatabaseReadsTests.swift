import BrokerTestSupport
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// Issue 34, part 5: `DATABASE_READ_URL`. A group request's first evaluation may read its cohort and cells
/// from a standby while the standby's data is recent enough; a withdrawal of consent made meanwhile sends
/// the evaluation back to the primary. A real standby is `make faults FAULTS_ONLY=failover`'s formation;
/// here, what holds on any server: the counter that consent withdrawals move, and that a server which is
/// not a standby is never read from as one.
@Suite("Reads from a standby (DATABASE_READ_URL, issue 34)")
struct DatabaseReadsTests {
    static let logger = Logger(label: "test")

    @Test("every withdrawal of consent moves the consent version; what can only add people does not")
    func consentVersion() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            try await TestDatabase.withClient(url) { pool in
                func version() async throws -> Int64 {
                    try await pool.withConnection { try await ConsentVersionStore.version(on: $0, logger: Self.logger) }
                }
                func run(_ sql: String) async throws { try await pool.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger) }
                func account(_ role: String, _ status: String) async throws -> String {
                    let email = "\(UUID().uuidString.lowercased())@example.com"
                    let rows = try await pool.query(
                        PostgresQuery(
                            unsafeSQL: "INSERT INTO accounts (role, email, status) VALUES ('\(role)', '\(email)', '\(status)') RETURNING id::text"),
                        logger: Self.logger)
                    return try rows.rows[0].decode(String.self)
                }
                let person = try await account("user", "pending")
                let company = try await account("third_party", "active")
                let start = try await version()
                try await run("UPDATE accounts SET status = 'active', activated_at = now() WHERE id = '\(person)'")
                #expect(try await version() == start, "an activation adds someone: no withdrawal")

                try await run("INSERT INTO blocks (user_id, third_party_id) VALUES ('\(person)', '\(company)')")
                #expect(try await version() == start + 1, "a block")
                try await run("DELETE FROM blocks WHERE user_id = '\(person)'")
                #expect(try await version() == start + 1, "an unblock adds someone back: no withdrawal")

                try await run("INSERT INTO unshared_types (user_id, type) VALUES ('\(person)', 1)")
                #expect(try await version() == start + 2, "a type no longer shared")
                try await run("DELETE FROM unshared_types WHERE user_id = '\(person)'")
                #expect(try await version() == start + 2, "sharing again: no withdrawal")

                try await run("DELETE FROM accounts WHERE id = '\(person)'")
                #expect(try await version() == start + 3, "an account erased")
            }
        }
    }

    @Test("a read URL that is not a standby is never read from as one: reads stay on the primary")
    func notAStandby() async throws {
        try await TestDatabase.withMigratedDatabase { url in
            let logger = Self.logger
            let primary = DatabasePool(url: url, limits: DatabaseLimits(), logger: logger)
            let replica = DatabasePool(url: url, limits: DatabaseLimits(), logger: logger)
            let staleness = ReplicaStaleness(
                primary: primary, replica: replica, replicaURL: url, bound: .seconds(5), logger: logger, interval: .milliseconds(50))
            let reads = DatabaseReads(primary: primary, replica: replica, staleness: staleness)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await primary.run() }
                group.addTask { await replica.run() }
                group.addTask { try await staleness.run() }
                defer { group.cancelAll() }
                // Measured a few times: a primary has no replay position, so its staleness stays unknown.
                try await Task.sleep(for: .milliseconds(400))
                #expect(staleness.staleness == nil)
                #expect(!staleness.usable)
                #expect(reads.source().onStandby == false)
            }
        }
    }

    @Test("DATABASE_READ_URL is checked at start, and its staleness bound is read")
    func configuration() throws {
        var environment = ["DATABASE_URL": "postgres://d4h:d4h@127.0.0.1:5432/d4h"]
        environment["DATABASE_READ_URL"] = "postgres://d4h:d4h@127.0.0.1:5433,127.0.0.1:5434/d4h?target_session_attrs=prefer-standby"
        environment["DATABASE_READ_MAX_STALENESS"] = "3"
        let configuration = try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment))
        #expect(configuration.databaseReadURL == environment["DATABASE_READ_URL"])
        #expect(configuration.databaseReadMaxStaleness == .seconds(3))
        environment["DATABASE_READ_URL"] = "postgres://d4h:d4h@127.0.0.1:5433,/d4h"
        #expect(throws: ConfigurationError.self) { try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)) }
    }
}

extension DatabaseReadsTests {
    /// The standby's lag made by hand: the "standby" is the primary itself, and a person blocks the company
    /// after the cohort was read and before the ledger lock, as a block the standby had not replayed yet would
    /// be. Without the consent version the cohort read before the block is stored, the person counted.
    @Test("a block committed after a standby's cohort read and before the ledger lock sends the evaluation to the primary: the person is not counted")
    func withdrawalDuringAStandbyRead() async throws {
        try await TestHarness.run(configure: GroupFixtures.smallK, noise: NoNoise()) { harness in
            let ids = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            let company = try #require(UUID(uuidString: try await harness.accountID(try await harness.activeCompany())))
            _ = ids
            // Someone the cohort would hold: the first with heart rates in the window.
            let filters = [GroupRequest.Filter(type: .heartRate, min: 0, max: 300)]
            let from = try #require(CalendarDate(iso: "2026-03-01"))
            let to = try #require(CalendarDate(iso: "2026-03-02"))
            let blockedNumber = try #require(
                try await TestDatabase.withClient(harness.databaseURL) { client in
                    try await GroupRequestService(
                        client: client, minimumCohort: GroupFixtures.k, evaluations: EvaluationSlots(slots: 2, timeout: .seconds(30))
                    )
                    .matchingCohort(
                        filters: filters, demographics: .init(ageMin: nil, ageMax: nil, sex: nil), from: from, to: to, excludingBlocksOf: company,
                        logger: TestDatabase.logger)
                }.first)
            let blocked = try #require(
                try await harness.sql("SELECT account_id::text FROM users WHERE person_number = \(blockedNumber)").first?.decode(String.self))
            let admin = try TestDatabase.adminURL
            let databaseName = harness.databaseURL.database
            try await TestDatabase.withClient(harness.databaseURL) { client in
                var service = GroupRequestService(
                    client: client, minimumCohort: GroupFixtures.k, evaluations: EvaluationSlots(slots: 2, timeout: .seconds(30)),
                    privacy: PrivacySettings(), noise: NoNoise(), reads: DatabaseReads(primary: client, replica: client, usable: { true }))
                let blockedOnce = Mutex(false)
                service.stepTimer = EvaluationStepTimer { step, _ in
                    // After the first cohort read, before its ledger transaction: the person blocks the company.
                    guard step == .cohort,
                        blockedOnce.withLock({ done in
                            defer { done = true }
                            return !done
                        })
                    else { return }
                    Self.psql(admin, database: databaseName, "INSERT INTO blocks (user_id, third_party_id) VALUES ('\(blocked)', '\(company)')")
                }
                let request = try await service.create(
                    .init(
                        types: [.heartRate], filters: filters, demographics: .init(ageMin: nil, ageMax: nil, sex: nil), windowFrom: from,
                        windowTo: to,
                        bucket: .day, purpose: "Consent race", subscriptionDays: nil, purposeCode: .healthcareResearch),
                    by: Principal(accountID: company, role: .thirdParty, credential: .session(tokenHash: Data())), logger: TestDatabase.logger)
                let cohort = try await harness.sql("SELECT unnest(cohort)::int8 FROM group_requests WHERE id = '\(request.id)'")
                let numbers = try cohort.map { try $0.decode(Int64.self) }
                #expect(!numbers.isEmpty)
                #expect(!numbers.contains(Int64(blockedNumber)), "the person who blocked the company is in its cohort")
                #expect(blockedOnce.withLock { $0 })
            }
        }
    }

    /// One statement through psql, run to its end on the calling thread (the evaluation's step timer is
    /// synchronous, and the statement must commit before the evaluation goes on).
    static func psql(_ admin: DatabaseURL, database: String, _ sql: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/lib/postgresql/15/bin/psql")
        process.arguments = [
            "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", admin.host, "-p", String(admin.port), "-U", admin.username, "-d", database, "-c", sql,
        ]
        process.environment = ["PGPASSWORD": admin.password ?? ""]
        try? process.run()
        process.waitUntilExit()
    }
}
