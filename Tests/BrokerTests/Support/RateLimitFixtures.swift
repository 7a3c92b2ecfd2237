import BrokerTestSupport
import Foundation
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// What the rate-limit suites share: a configuration with only the given limits, on a clock the test moves.
enum RateLimitFixtures {
    /// Limits of `limits` (everything else off) on `clock`.
    static func configure(_ clock: ManualClock, _ limits: [RateLimitedOperation: RateLimit])
        -> @Sendable (inout BrokerConfiguration) -> Void
    {
        { configuration in
            configuration.rateLimits = .unlimited
            for (operation, limit) in limits { configuration.rateLimits[operation] = limit }
            configuration.rateLimits.clock = clock.standingWall
        }
    }

    /// Checks a 429 as the contract gives it (a problem document, `Retry-After` a whole number of seconds
    /// ≥ 1) and returns the seconds.
    @discardableResult
    static func expectRateLimited(_ response: TestResponse, _ harness: TestHarness, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> Int
    {
        try #require(response.status == .tooManyRequests, "\(response.status): \(harness.text(response))", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        let problem = try harness.object(response)
        #expect(problem["type"] as? String == Problem.typeBase + "rate-limited", sourceLocation: sourceLocation)
        #expect(problem["status"] as? Int == 429, sourceLocation: sourceLocation)
        #expect((problem["detail"] as? String)?.contains("try again in") == true, sourceLocation: sourceLocation)
        let header = try #require(response.headers[.retryAfter], "no Retry-After", sourceLocation: sourceLocation)
        let seconds = try #require(Int(header), "Retry-After: \(header)", sourceLocation: sourceLocation)
        #expect(seconds >= 1, sourceLocation: sourceLocation)
        return seconds
    }

    /// Two limiters with `limits`, as two server instances hold them (each with a pool of its own), on one
    /// fresh database, a person to charge, and a third pool to read the table with.
    static func withTwoInstances(
        _ limits: RateLimits,
        _ body: @escaping @Sendable (_ first: RateLimiter, _ second: RateLimiter, _ person: Principal, _ database: DatabasePool) async throws -> Void
    ) async throws {
        try await TestDatabase.withMigratedDatabase { url in
            try await TestDatabase.withClient(url) { database in
                let person = try await Self.person(database)
                try await TestDatabase.withClient(url) { firstPool in
                    try await TestDatabase.withClient(url) { secondPool in
                        try await body(
                            RateLimiter(client: firstPool, limits: limits), RateLimiter(client: secondPool, limits: limits), person, database)
                    }
                }
            }
        }
    }

    /// A new person's account, as the limiter sees its caller.
    static func person(_ database: DatabasePool) async throws -> Principal {
        let email = "rate.\(UUID().uuidString.lowercased())@example.com"
        let inserted = try await database.query(
            "INSERT INTO accounts (role, email) VALUES ('user', \(email)) RETURNING id", logger: TestDatabase.logger)
        let row = try #require(inserted.rows.first)
        return Principal(accountID: try row.decode(UUID.self), role: .user, credential: .apiKey(id: UUID(), scope: .full))
    }

    /// The first column of the first row of `text`, as an integer.
    static func count(_ database: DatabasePool, _ text: String) async throws -> Int {
        let row = try #require(try await database.query(PostgresQuery(unsafeSQL: text), logger: TestDatabase.logger).rows.first)
        return Int(try row.decode(Int64.self))
    }
}
