import BrokerTestSupport
import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import BrokerDomain

/// Issue 34, part 5, for downloads and peer statistics: what they may read on a standby, posed here by a
/// `FrozenStandby` (the test database seen through a snapshot taken earlier, as a standby that has not
/// replayed what came since). A real standby is `make faults FAULTS_ONLY=read-replica`'s.
@Suite("Downloads and peer statistics on a standby (DATABASE_READ_URL, issue 34)")
struct StandbyReadsTests {
    static let logger = TestDatabase.logger

    /// A person's accepted request for heart rates, the service that streams it and the company asking.
    struct Download: Sendable {
        let id: UUID
        let company: Principal
        let person: Principal
        let parties: RequestParties
    }

    static func acceptedRequest(_ harness: TestHarness, minutes: [Int]) async throws -> Download {
        let parties = try await harness.requestParties()
        try await harness.uploadHeartRates(minutes.map { TestHarness.time(minutes: $0) }, token: parties.person)
        let id = try #require(UUID(uuidString: try await harness.acceptedRequestID(parties, subscriptionDays: 30)))
        return Download(
            id: id,
            company: Principal(
                accountID: try #require(UUID(uuidString: parties.companyID)), role: .thirdParty, credential: .session(tokenHash: Data())),
            person: Principal(accountID: try #require(UUID(uuidString: parties.personID)), role: .user, credential: .session(tokenHash: Data())),
            parties: parties)
    }

    /// The CSV rows (type, at, value) a download through `reads` sends.
    static func rows(of download: Download, client: DatabasePool, reads: DatabaseReads) async throws -> [[Substring]] {
        let service = SingleRequestService(client: client, pseudonymizer: Pseudonymizer(client: client), reads: reads)
        let plan = try await service.prepareDownload(id: download.id, cursor: nil, by: download.company, logger: logger)
        let sent = Mutex<[UInt8]>([])
        try await service.streamDownload(plan, format: .csv, logger: logger) { bytes in
            sent.withLock { $0 += bytes }
            return true
        }
        return String(decoding: sent.withLock { $0 }, as: UTF8.self).split(separator: "\r\n").dropFirst().map { $0.split(separator: ",") }
    }

    @Test("a standby that has not replayed the primary's position at the plan is not read: no row the plan releases is missing")
    func standbyBehindThePlan() async throws {
        try await TestHarness.run { harness in
            let download = try await Self.acceptedRequest(harness, minutes: [0, 1, 2])
            try await FrozenStandby.freezing(harness.databaseURL) { standby in
                try await harness.uploadHeartRates([TestHarness.time(minutes: 3), TestHarness.time(minutes: 4)], token: download.parties.person)
                try await TestDatabase.withClient(harness.databaseURL) { client in
                    let rows = try await Self.rows(of: download, client: client, reads: DatabaseReads(primary: client, standby: standby))
                    // On the frozen standby the two samples uploaded after it froze are missing, and the cursor
                    // would still move past them: the company would never get them.
                    #expect(rows.count == 5, "\(rows)")
                }
            }
        }
    }

    @Test("a standby that has replayed the plan's position is read")
    func caughtUpStandbyIsRead() async throws {
        try await TestHarness.run { harness in
            let download = try await Self.acceptedRequest(harness, minutes: [0, 1, 2])
            try await FrozenStandby.freezing(harness.databaseURL, claimsReplayed: .max) { standby in
                // Changed behind the data revision's back, on the primary only: a mark of where the rows came from.
                _ = try await harness.sql("UPDATE samples SET value = value + 1000 WHERE user_id = '\(download.parties.personID)'")
                try await TestDatabase.withClient(harness.databaseURL) { client in
                    let rows = try await Self.rows(of: download, client: client, reads: DatabaseReads(primary: client, standby: standby))
                    #expect(rows.map { String($0[2]) } == ["60", "61", "62"], "\(rows)")
                    let primary = try await Self.rows(of: download, client: client, reads: DatabaseReads(primary: client))
                    #expect(primary.map { String($0[2]) } == ["1060", "1061", "1062"], "\(primary)")
                }
            }
        }
    }

    /// A standby that has replayed the plan's position may still lack a correction committed after it.
    @Test("a correction committed on the primary that the standby has not replayed is not sent")
    func correctionNotReplayed() async throws {
        try await TestHarness.run { harness in
            let download = try await Self.acceptedRequest(harness, minutes: [0, 1, 2, 3, 4])
            try await FrozenStandby.freezing(harness.databaseURL, claimsReplayed: .max) { standby in
                try await TestDatabase.withClient(harness.databaseURL) { client in
                    let deleted = try await SampleService(client: client, groupMinCohort: 1000).correct(
                        SampleCorrection.parse(type: "heart_rate", at: nil, from: TestHarness.time(minutes: 0), to: TestHarness.time(minutes: 1)),
                        by: download.person, logger: Self.logger)
                    #expect(deleted == 2)
                    let rows = try await Self.rows(of: download, client: client, reads: DatabaseReads(primary: client, standby: standby))
                    #expect(rows.map { String($0[2]) } == ["62", "63", "64"], "deleted samples sent from the standby: \(rows)")
                }
            }
        }
    }

    // MARK: Peer statistics

    /// The stored heart-rate cell of the crowd's band (`NoNoise`: its exact count).
    static func crowdCount(_ harness: TestHarness) async throws -> Int {
        try await harness.int(
            "SELECT coalesce(max(people), -1)::int FROM peer_month_cells WHERE month = '\(PeerStatisticsPrivacyTests.month)' AND type = \(SampleType.heartRate.code)"
        )
    }

    static func publish(_ harness: TestHarness, standby: FrozenStandby) async throws {
        try await TestDatabase.withClient(harness.databaseURL) { client in
            let peers = PeerStatistics(
                client: client, mechanism: CellMechanism(noise: NoNoise(), minimumPeople: 3), settings: PrivacySettings(),
                reads: DatabaseReads(primary: client, standby: standby))
            let publication = try await peers.publish(PeerStatisticsPrivacyTests.month, logger: Self.logger)
            #expect(publication == .published)
        }
    }

    @Test("a month's exact cells are read on a standby recent enough")
    func peerCellsReadOnStandby() async throws {
        try await TestHarness.run(noise: NoNoise()) { harness in
            let days = [PeerStatisticsPrivacyTests.day(2)]
            try await PeerStatisticsPrivacyTests.insertCrowd(harness, count: 4, days: days, value: 70)
            try await FrozenStandby.freezing(harness.databaseURL) { standby in
                // Two more peers the standby has not replayed (no withdrawal: the consent version stays).
                try await PeerStatisticsPrivacyTests.insertCrowd(harness, count: 2, days: days, value: 70)
                try await Self.publish(harness, standby: standby)
            }
            #expect(try await Self.crowdCount(harness) == 4)
        }
    }

    @Test("a type no longer shared since the standby's state is not counted: the cells are read again on the primary")
    func peerCellsAfterWithdrawal() async throws {
        try await TestHarness.run(noise: NoNoise()) { harness in
            let days = [PeerStatisticsPrivacyTests.day(2)]
            try await PeerStatisticsPrivacyTests.insertCrowd(harness, count: 5, days: days, value: 70)
            try await FrozenStandby.freezing(harness.databaseURL) { standby in
                _ = try await harness.sql(
                    """
                    INSERT INTO unshared_types (user_id, type)
                    SELECT account_id, \(SampleType.heartRate.code) FROM users WHERE full_name = 'Crowd' ORDER BY account_id LIMIT 1
                    """)
                try await Self.publish(harness, standby: standby)
            }
            #expect(try await Self.crowdCount(harness) == 4, "the person who stopped sharing heart rates is counted")
        }
    }
}
