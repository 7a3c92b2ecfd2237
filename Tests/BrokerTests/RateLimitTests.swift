import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
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
            $0.rateLimits.now = { clock.now }
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

    // MARK: The limiter alone

    static func person() -> Principal { Principal(accountID: UUID(), role: .user, credential: .apiKey(id: UUID(), scope: .full)) }

    @Test("a burst of the full capacity is admitted at once; the next waits exactly one interval")
    func burstAndExactWait() throws {
        let clock = ManualClock()
        var limits = RateLimits.unlimited
        limits.uploads = .perMinute(120)
        limits.now = { clock.now }
        let limiter = RateLimiter(limits: limits)
        let caller = Self.person()
        for _ in 0..<120 { try limiter.admit(caller, to: .uploads) }
        #expect(throws: RateLimitExceeded(operation: .uploads, limit: .perMinute(120), wait: .milliseconds(500))) {
            try limiter.admit(caller, to: .uploads)
        }
        clock.advance(by: .milliseconds(500))
        try limiter.admit(caller, to: .uploads)
        // Unlimited operations are never refused.
        for _ in 0..<1000 { try limiter.admit(caller, to: .downloads) }
    }

    @Test("memory stays bounded: idle (full) buckets are dropped, and the map never outgrows its cap")
    func boundedMemory() throws {
        let clock = ManualClock()
        var limits = RateLimits.unlimited
        limits.uploads = .perMinute(3)
        limits.maximumBuckets = 10
        limits.now = { clock.now }
        let limiter = RateLimiter(limits: limits)
        for _ in 0..<3 { try limiter.admit(Self.person(), to: .uploads) }
        #expect(limiter.bucketCount == 3)
        // A minute on, those three buckets are full again, so the next sweep forgets them.
        clock.advance(by: .seconds(61))
        try limiter.admit(Self.person(), to: .uploads)
        #expect(limiter.bucketCount == 1)
        // Many busy accounts at once: never more than the cap, and nobody is refused for it.
        for _ in 0..<100 { try limiter.admit(Self.person(), to: .uploads) }
        #expect(limiter.bucketCount <= 10)
    }
}
