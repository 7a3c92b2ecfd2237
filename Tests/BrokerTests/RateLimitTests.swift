import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// Per-account limits of the expensive endpoints, on a hand-moved clock.
@Suite("Rate limits", .serialized)
struct RateLimitTests {
    /// One heart-rate sample at minute `minute` of a morning: every call a new, distinct sample.
    static func sample(_ minute: Int) -> [(type: String, value: Double, at: String)] {
        [("heart_rate", 60 + Double(minute % 100), String(format: "2026-03-01T%02d:%02d:00Z", 8 + minute / 60, minute % 60))]
    }

    /// A valid group request (refused for its small cohort, but created: 201).
    static let groupRequestBody =
        #"{"types":["heart_rate"],"filters":[{"type":"heart_rate","min":0,"max":300}],"window":{"from":"2026-03-02","to":"2026-03-15"},"bucket":"week","purposeCode":"HRESCH","purpose":"Study"}"#

    /// Everything an upload can change, as one fingerprint.
    static func healthDataFingerprint(_ harness: TestHarness) async throws -> String {
        let row = try #require(
            try await harness.sql(
                """
                SELECT md5(concat_ws('|',
                    (SELECT string_agg(s::text, ',' ORDER BY s::text) FROM samples s),
                    (SELECT string_agg(r::text, ',' ORDER BY r::text) FROM daily_rollups r),
                    (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM sample_arrivals a),
                    (SELECT string_agg(b::text, ',' ORDER BY b::text) FROM sample_batches b),
                    (SELECT count(*) FROM audit_events)::text))
                """
            ).first)
        return try row.decode(String.self)
    }

    @Test("with 3 uploads a minute, the 4th is a 429 with Retry-After that stores and changes nothing")
    func uploadOverTheLimit() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.uploads: .perMinute(3)])) { harness in
            let token = try await harness.activeUser()
            for minute in 0..<3 {
                #expect(try await harness.upload(Self.sample(minute), token: token).status == .ok)
            }
            let before = try await Self.healthDataFingerprint(harness)
            // Three tokens taken at once; the next grows back after 60 s / 3.
            #expect(try RateLimitFixtures.expectRateLimited(try await harness.upload(Self.sample(3), token: token), harness) == 20)
            #expect(
                try RateLimitFixtures.expectRateLimited(
                    try await harness.uploadCSV("type,value,at\nheart_rate,70,2026-03-01T09:00:00Z\n", token: token), harness) == 20
            )
            #expect(try await Self.healthDataFingerprint(harness) == before)
            #expect(try await harness.int("SELECT count(*) FROM samples") == 3)
        }
    }

    @Test("one account's spent budget leaves another account's untouched")
    func otherAccountsUnaffected() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.uploads: .perMinute(3)])) { harness in
            let first = try await harness.activeUser()
            var other = TestHarness.Person()
            other.fiscalCode = TestHarness.uniqueFiscalCode()
            let second = try await harness.activeUser(other)
            for minute in 0..<3 { #expect(try await harness.upload(Self.sample(minute), token: first).status == .ok) }
            try RateLimitFixtures.expectRateLimited(try await harness.upload(Self.sample(3), token: first), harness)
            for minute in 0..<3 { #expect(try await harness.upload(Self.sample(minute), token: second).status == .ok) }
            try RateLimitFixtures.expectRateLimited(try await harness.upload(Self.sample(3), token: second), harness)
        }
    }

    @Test("the bucket refills one token per interval: Retry-After is exactly when the next upload is admitted")
    func refill() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.uploads: .perMinute(3)])) { harness in
            let token = try await harness.activeUser()
            for minute in 0..<3 { #expect(try await harness.upload(Self.sample(minute), token: token).status == .ok) }
            #expect(try RateLimitFixtures.expectRateLimited(try await harness.upload(Self.sample(3), token: token), harness) == 20)
            clock.advance(by: .seconds(19))
            #expect(try RateLimitFixtures.expectRateLimited(try await harness.upload(Self.sample(3), token: token), harness) == 1)
            clock.advance(by: .seconds(1))
            #expect(try await harness.upload(Self.sample(3), token: token).status == .ok)
            // Only one token grew back.
            #expect(try RateLimitFixtures.expectRateLimited(try await harness.upload(Self.sample(4), token: token), harness) == 20)
            // A full period later the whole burst is available again, and no more.
            clock.advance(by: .seconds(60))
            for minute in 4..<7 { #expect(try await harness.upload(Self.sample(minute), token: token).status == .ok) }
            try RateLimitFixtures.expectRateLimited(try await harness.upload(Self.sample(7), token: token), harness)
            #expect(try await harness.int("SELECT count(*) FROM samples") == 7)
        }
    }

    @Test("a company's session and its API key draw on one budget; another company has its own")
    func sessionAndAPIKeyShareABudget() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.groupRequests: .perMinute(2)])) { harness in
            let session = try await harness.activeCompany()
            let created = try await harness.request(.post, "/v1/api-keys", json: #"{"name":"batch"}"#, token: session)
            let apiKey = try #require(try harness.object(created)["secret"] as? String)
            let body = Self.groupRequestBody
            #expect(try await harness.request(.post, "/v1/group-requests", json: body, token: session).status == .created)
            #expect(try await harness.request(.post, "/v1/group-requests", json: body, token: apiKey).status == .created)
            try RateLimitFixtures.expectRateLimited(try await harness.request(.post, "/v1/group-requests", json: body, token: apiKey), harness)
            try RateLimitFixtures.expectRateLimited(try await harness.request(.post, "/v1/group-requests", json: body, token: session), harness)
            #expect(try await harness.int("SELECT count(*) FROM group_requests") == 2)

            var other = TestHarness.Company()
            other.vatNumber = TestHarness.uniqueVATNumber()
            let otherCompany = try await harness.activeCompany(other)
            #expect(try await harness.request(.post, "/v1/group-requests", json: body, token: otherCompany).status == .created)
        }
    }

    @Test("a caller of a role the operation is not for still gets its 403, never a 429")
    func wrongRoleIsNotCharged() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.uploads: .perMinute(1), .groupRequests: .perMinute(1)])) {
            harness in
            let company = try await harness.activeCompany()
            let person = try await harness.activeUser()
            for minute in 0..<3 {
                #expect(try await harness.upload(Self.sample(minute), token: company).status == .forbidden)
                #expect(try await harness.request(.post, "/v1/group-requests", json: Self.groupRequestBody, token: person).status == .forbidden)
            }
            // The person's own upload budget is intact.
            #expect(try await harness.upload(Self.sample(0), token: person).status == .ok)
        }
    }

    @Test("downloads: a person whose download budget is spent still gets 403 from the company-only download endpoints")
    func wrongRoleDownloadIsNotCharged() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.downloads: .perMinute(1)])) { harness in
            let person = try await harness.activeUser()
            #expect(try await harness.request(.get, "/v1/me/export", token: person).status == .ok)  // spends the budget
            #expect(try await harness.request(.get, "/v1/me/export", token: person).status == .tooManyRequests)
            let unknown = UUID().uuidString.lowercased()
            #expect(try await harness.request(.get, "/v1/single-requests/\(unknown)/data", token: person).status == .forbidden)
            #expect(try await harness.request(.get, "/v1/group-requests/\(unknown)/results", token: person).status == .forbidden)
        }
    }

    @Test("0 turns a limit off")
    func zeroDisables() async throws {
        let configuration = try BrokerConfiguration(reader: ConfigReaderForTests.environment(["RATE_LIMIT_UPLOADS_PER_MINUTE": "0"]))
        #expect(configuration.rateLimits.uploads == nil)
        #expect(configuration.rateLimits.downloads == .perMinute(120))

        let clock = ManualClock()
        try await TestHarness.run(configure: { [rateLimits = configuration.rateLimits] in
            $0.rateLimits = rateLimits
            $0.rateLimits.clock = clock.standingWall
        }) { harness in
            let token = try await harness.activeUser()
            // More than the default burst (120), at one instant: the clock never moves.
            var statuses: [HTTPResponse.Status] = []
            for minute in 0..<125 { statuses.append(try await harness.upload(Self.sample(minute), token: token).status) }
            #expect(statuses == Array(repeating: .ok, count: 125))
        }
    }

    @Test("RATE_LIMIT_* settings: defaults, per-minute and per-hour values, and invalid values refused by name")
    func configuration() throws {
        func read(_ environment: [String: String]) throws -> RateLimits {
            try BrokerConfiguration(reader: ConfigReaderForTests.environment(environment)).rateLimits
        }
        let defaults = try read([:])
        #expect(defaults.uploads == .perMinute(120))
        #expect(defaults.imports == .perHour(10))
        #expect(defaults.downloads == .perMinute(120))
        #expect(defaults.groupRequests == .perMinute(30))

        let set = try read([
            "RATE_LIMIT_UPLOADS_PER_MINUTE": "5", "RATE_LIMIT_IMPORTS_PER_HOUR": "2",
            "RATE_LIMIT_DOWNLOADS_PER_MINUTE": "7", "RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE": "0",
        ])
        #expect(set.uploads == .perMinute(5))
        #expect(set.imports == RateLimit(capacity: 2, period: .seconds(3600)))
        #expect(set.downloads == .perMinute(7))
        #expect(set.groupRequests == nil)

        for (variable, value) in [
            ("RATE_LIMIT_UPLOADS_PER_MINUTE", "-1"), ("RATE_LIMIT_IMPORTS_PER_HOUR", "ten"),
            ("RATE_LIMIT_DOWNLOADS_PER_MINUTE", "1.5"), ("RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE", ""),
        ] {
            let error = #expect(throws: ConfigurationError.self, "\(variable)=\(value)") { try read([variable: value]) }
            #expect(error.map { "\($0)".hasPrefix(variable) && "\($0)".contains("whole number") } == true, "\(String(describing: error))")
        }
    }

    @Test("downloads share one budget across single-request data (JSON and streamed CSV), group results and the export")
    func downloads() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.downloads: .perMinute(2)])) { harness in
            let parties = try await harness.requestParties()
            #expect(try await harness.upload(Self.sample(0), token: parties.person).status == .ok)
            let id = try await harness.acceptedRequestID(parties)
            #expect(try await harness.request(.get, "/v1/single-requests/\(id)/data", token: parties.company).status == .ok)
            #expect(try await harness.request(.get, "/v1/single-requests/\(id)/data?format=csv", token: parties.company).status == .ok)
            let csv = try await harness.request(.get, "/v1/single-requests/\(id)/data?format=csv", token: parties.company)
            try RateLimitFixtures.expectRateLimited(csv, harness)
            #expect(csv.headers[.contentDisposition] == nil, "a refused download carries no file")
            try RateLimitFixtures.expectRateLimited(
                try await harness.request(.get, "/v1/group-requests/\(UUID())/results", token: parties.company), harness)
            // One audit event per release: the refused download released nothing.
            #expect(try await harness.int("SELECT count(*) FROM audit_events WHERE action = 'single_request.data_released'") == 2)

            // The person's export is a download of their own account's budget.
            #expect(try await harness.request(.get, "/v1/me/export", token: parties.person).status == .ok)
            #expect(try await harness.request(.get, "/v1/me/export", token: parties.person).status == .ok)
            try RateLimitFixtures.expectRateLimited(try await harness.request(.get, "/v1/me/export", token: parties.person), harness)
        }
    }

    @Test("the audit log as CSV is a download; its JSON pages are not")
    func auditCSV() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.downloads: .perMinute(1)])) { harness in
            let auditor = try await harness.activeAuditor()
            #expect(try await harness.request(.get, "/v1/audit/events?format=csv", token: auditor).status == .ok)
            try RateLimitFixtures.expectRateLimited(try await harness.request(.get, "/v1/audit/events?format=csv", token: auditor), harness)
            for _ in 0..<3 { #expect(try await harness.request(.get, "/v1/audit/events", token: auditor).status == .ok) }
        }
    }

    @Test("imports: with 1 an hour, the second waits an hour")
    func imports() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: RateLimitFixtures.configure(clock, [.imports: .perHour(1)])) { harness in
            let token = try await harness.activeUser()
            let xml = AppleHealthFixtures.exportXML
            #expect(try await AppleHealthFixtures.post(harness, xml, contentType: "application/xml", token: token).status == .ok)
            let stored = try await harness.int("SELECT count(*) FROM samples")
            let limited = try await AppleHealthFixtures.post(harness, xml, contentType: "application/xml", token: token)
            #expect(try RateLimitFixtures.expectRateLimited(limited, harness) == 3600)
            clock.advance(by: .seconds(3600))
            #expect(try await AppleHealthFixtures.post(harness, xml, contentType: "application/xml", token: token).status == .ok)
            #expect(try await harness.int("SELECT count(*) FROM samples") == stored)
        }
    }

    // MARK: Across instances

    @Test("a burst split across two server instances on one database gets exactly the limit, not twice it")
    func burstSplitAcrossInstances() async throws {
        // The production clock (the database's): the burst is over long before an hour's refill interval.
        let configure: @Sendable (inout BrokerConfiguration) -> Void = {
            $0.rateLimits = .unlimited
            $0.rateLimits.uploads = .perHour(6)
        }
        try await TestHarness.run(configure: configure) { first in
            try await TestHarness.run(databaseURL: first.databaseURL, configure: configure) { second in
                let token = try await first.activeUser()
                // Twelve uploads at once, on connections of their own, every other one to the other instance.
                let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String).self) { group in
                    for minute in 0..<12 {
                        let instance = minute.isMultiple(of: 2) ? first : second
                        group.addTask {
                            try await instance.requestOnNewConnection(
                                .post, "/v1/me/samples", json: TestHarness.samplesJSON(Self.sample(minute)), token: token)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0.0 == .ok }.count == 6, "\(statuses.map(\.0))")
                #expect(statuses.filter { $0.0 == .tooManyRequests }.count == 6, "\(statuses.map(\.0))")
                #expect(try await first.int("SELECT count(*) FROM samples") == 6)
                // Each instance refuses the next one, with the wait the other one's charges set (one token an
                // hour grows back every 10 minutes).
                for instance in [first, second] {
                    let seconds = try RateLimitFixtures.expectRateLimited(try await instance.upload(Self.sample(12), token: token), instance)
                    #expect((590...600).contains(seconds), "Retry-After \(seconds)")
                }
            }
        }
    }

    @Test("failed logins split across two server instances are throttled as if they reached one")
    func loginFailuresSplitAcrossInstances() async throws {
        try await TestHarness.run { first in
            try await TestHarness.run(databaseURL: first.databaseURL) { second in
                let person = TestHarness.Person()
                try await first.activeUser(person)
                // The five free failures (LOGIN_ACCOUNT_FREE_ATTEMPTS), alternating between the instances.
                for attempt in 1...5 {
                    let instance = attempt.isMultiple(of: 2) ? second : first
                    #expect(try await instance.tryLogIn(person.email, "wrong-password-\(attempt)").status == .unauthorized, "attempt \(attempt)")
                }
                // Neither instance saw five failures itself; both refuse even the right password.
                for instance in [first, second] {
                    let seconds = try instance.expectThrottled(try await instance.tryLogIn(person.email, person.password))
                    #expect(seconds.map { (55...60).contains($0) } == true, "Retry-After \(seconds ?? 0)")
                }
                #expect(try await first.int("SELECT count(*) FROM sessions") == 1)
            }
        }
    }

    @Test("concurrent charges from many tasks on two instances admit exactly the capacity")
    func concurrentChargesNeverOverAdmit() async throws {
        let clock = ManualClock()
        var limits = RateLimits.unlimited
        limits.uploads = .perMinute(25)
        limits.clock = clock.standingWall
        try await RateLimitFixtures.withTwoInstances(limits) { first, second, person, _ in
            let outcomes = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<200 {
                    let limiter = index.isMultiple(of: 2) ? first : second
                    group.addTask {
                        do {
                            try await limiter.admit(person, to: .uploads, logger: TestDatabase.logger)
                            return nil
                        } catch let refused as RateLimitExceeded {
                            return refused.retryAfterSeconds
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == nil }.count == 25)
            // The clock stood still: every refusal waits exactly one interval (60 s / 25 = 2.4 s, so 3).
            #expect(outcomes.compactMap { $0 } == Array(repeating: 3, count: 175))
        }
    }

    @Test("a refused charge leaves the bucket unchanged; a burst and its exact wait hold across instances")
    func refusalLeavesTheBucketUnchanged() async throws {
        let clock = ManualClock()
        var limits = RateLimits.unlimited
        limits.uploads = .perMinute(120)
        limits.clock = clock.standingWall
        try await RateLimitFixtures.withTwoInstances(limits) { first, second, person, database in
            for _ in 0..<120 { try await first.admit(person, to: .uploads, logger: TestDatabase.logger) }
            let row = "SELECT ctid::text || ' ' || xmin::text || ' ' || full_at::text FROM rate_limit_buckets"
            let before = try #require(try await database.query(PostgresQuery(unsafeSQL: row), logger: TestDatabase.logger).rows.first)
                .decode(String.self)
            for limiter in [first, second, second, first] {
                await #expect(throws: RateLimitExceeded(operation: .uploads, limit: .perMinute(120), wait: .milliseconds(500))) {
                    try await limiter.admit(person, to: .uploads, logger: TestDatabase.logger)
                }
            }
            // Not even a new version of the row: a refusal writes nothing.
            let after = try #require(try await database.query(PostgresQuery(unsafeSQL: row), logger: TestDatabase.logger).rows.first)
                .decode(String.self)
            #expect(after == before)
            // So the token that grows back in one interval is there, once, for either instance.
            clock.advance(by: .milliseconds(499))
            await #expect(throws: RateLimitExceeded.self) { try await second.admit(person, to: .uploads, logger: TestDatabase.logger) }
            clock.advance(by: .milliseconds(1))
            try await second.admit(person, to: .uploads, logger: TestDatabase.logger)
            await #expect(throws: RateLimitExceeded.self) { try await first.admit(person, to: .uploads, logger: TestDatabase.logger) }
            // Unlimited operations are never refused, and never reach the table.
            for _ in 0..<200 { try await first.admit(person, to: .downloads, logger: TestDatabase.logger) }
            #expect(try await RateLimitFixtures.count(database, "SELECT count(*) FROM rate_limit_buckets") == 1)
        }
    }

    @Test("the shared bucket refills by the injected clock: half a period on, half the burst, whichever instance asks")
    func refillAcrossInstances() async throws {
        let clock = ManualClock()
        var limits = RateLimits.unlimited
        limits.statistics = .perMinute(10)
        limits.clock = clock.standingWall
        try await RateLimitFixtures.withTwoInstances(limits) { first, second, person, _ in
            func admitted(_ limiter: RateLimiter, _ attempts: Int) async throws -> Int {
                var count = 0
                for _ in 0..<attempts {
                    do {
                        try await limiter.admit(person, to: .statistics, logger: TestDatabase.logger)
                        count += 1
                    } catch is RateLimitExceeded {}
                }
                return count
            }
            #expect(try await admitted(first, 10) == 10)
            #expect(try await admitted(second, 5) == 0)
            clock.advance(by: .seconds(30))
            #expect(try await admitted(second, 10) == 5)
            #expect(try await admitted(first, 10) == 0)
            // A whole period of quiet refills the whole burst, and no more.
            clock.advance(by: .seconds(600))
            let fromSecond = try await admitted(second, 6)
            let fromFirst = try await admitted(first, 6)
            #expect(fromSecond == 6 && fromFirst == 4)
        }
    }

    @Test("housekeeping deletes full buckets only, a bounded batch at a time; a deleted one answers as a full one")
    func fullBucketsAreSwept() async throws {
        let clock = ManualClock()
        var limits = RateLimits.unlimited
        limits.uploads = .perMinute(3)
        limits.imports = .perHour(1)
        limits.clock = clock.standingWall
        try await RateLimitFixtures.withTwoInstances(limits) { first, second, person, database in
            var people = [person]
            for _ in 0..<4 { people.append(try await RateLimitFixtures.person(database)) }
            for caller in people { try await first.admit(caller, to: .uploads, logger: TestDatabase.logger) }
            try await first.admit(person, to: .imports, logger: TestDatabase.logger)
            #expect(try await second.forgetFullBuckets(logger: TestDatabase.logger) == 0)
            // A minute on, the upload buckets are full again; the import's has 59 minutes to go.
            clock.advance(by: .seconds(60))
            #expect(try await second.forgetFullBuckets(atMost: 3, logger: TestDatabase.logger) == 3)
            #expect(try await second.forgetFullBuckets(atMost: 3, logger: TestDatabase.logger) == 2)
            #expect(try await second.forgetFullBuckets(logger: TestDatabase.logger) == 0)
            #expect(try await RateLimitFixtures.count(database, "SELECT count(*) FROM rate_limit_buckets") == 1)
            await #expect(throws: RateLimitExceeded.self) { try await first.admit(person, to: .imports, logger: TestDatabase.logger) }
            // A swept account starts with a full bucket: the whole burst, then the exact wait.
            for _ in 0..<3 { try await second.admit(person, to: .uploads, logger: TestDatabase.logger) }
            await #expect(throws: RateLimitExceeded(operation: .uploads, limit: .perMinute(3), wait: .seconds(20))) {
                try await first.admit(person, to: .uploads, logger: TestDatabase.logger)
            }
            // An erased account's buckets go with it.
            _ = try await database.query("DELETE FROM accounts WHERE id = \(person.accountID)", logger: TestDatabase.logger)
            #expect(try await RateLimitFixtures.count(database, "SELECT count(*) FROM rate_limit_buckets") == 0)
        }
    }
}
