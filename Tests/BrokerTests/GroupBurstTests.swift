import BrokerTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Issue 14: a burst of group requests stalled the whole service. Each creation held a pooled connection
/// and the global evaluation lock while it leased more connections for the cells; with the pool full of
/// lock waiters the holder waited forever, and so did every other request.
@Suite("Group request burst", .serialized)
struct GroupBurstTests {
    /// A request of its own per index: different heart-rate bands and age bounds, so cohorts differ.
    static func body(_ index: Int) -> String {
        let low = 60 + Double(index % 12)
        let ageMax = 40 + index % 30
        return
            #"{"types":["heart_rate","step_count"],"filters":[{"type":"heart_rate","min":\#(low),"max":200}],"demographics":{"ageMax":\#(ageMax)},"window":{"from":"2026-03-01","to":"2026-03-02"},"bucket":"day","purposeCode":"HRESCH","purpose":"Burst \#(index)"}"#
    }

    @Test("60 group requests at once from three companies on a pool of 4: every one is answered and GET /v1/me keeps answering")
    func burstOnASmallPool() async throws {
        try await TestHarness.run(configure: {
            GroupFixtures.smallK(&$0)
            $0.rateLimits = .unlimited
            $0.database.poolSize = 4
            $0.database.leaseTimeout = .seconds(5)
            // 61 requests over the same 13 people: the budgets are not what this test is about.
            $0.privacy.personBudget = 100
            $0.privacy.companyBudget = 100
        }) { harness in
            _ = try await GroupFixtures.populate(harness, GroupFixtures.standard)
            var companies: [String] = []
            for _ in 0..<3 { companies.append(try await harness.activeCompany(.init(vatNumber: TestHarness.uniqueVATNumber()))) }
            let person = try await harness.activeUser()

            let burstDone = Atomic(false)
            let unrelated = Task {
                var statuses: [HTTPResponse.Status] = []
                while !burstDone.load(ordering: .acquiring) {
                    statuses.append(try await harness.requestOnNewConnection(.get, "/v1/me", token: person).status)
                    try await Task.sleep(for: .milliseconds(50))
                }
                return statuses
            }
            let companyTokens = companies
            let answers = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        try await harness.requestOnNewConnection(.post, "/v1/group-requests", json: Self.body(index), token: companyTokens[index % 3])
                            .status
                    }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            burstDone.store(true, ordering: .releasing)
            let meStatuses = try await unrelated.value

            #expect(answers.count == 60)
            let allowed: Set<HTTPResponse.Status> = [.created, .conflict, .tooManyRequests, .serviceUnavailable]
            #expect(answers.allSatisfy(allowed.contains), "statuses: \(answers.map(\.code))")
            #expect(answers.contains(.created), "not one of the burst was evaluated")
            #expect(!meStatuses.isEmpty)
            #expect(meStatuses.allSatisfy { $0 == .ok }, "GET /v1/me answered \(meStatuses.map(\.code)) during the burst")
            // The service is whole afterwards: a new request is evaluated.
            let after = try await harness.request(.post, "/v1/group-requests", json: Self.body(99), token: companies[0])
            #expect(after.status == .created)
        }
    }
}
