import HTTPTypes
import HummingbirdTesting
import Testing

/// Logins as the throttling and password-guessing tests try them.
extension TestHarness {
    /// `POST /v1/sessions` with `email` and `password`, whatever it answers.
    func tryLogIn(_ email: String, _ password: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await request(.post, "/v1/sessions", json: #"{"email":"\#(email)","password":"\#(password)"}"#, headers: headers)
    }

    /// One wrong password (`<prefix><n>`) per attempt number, each expected to be a plain 401.
    func failLogIns(
        _ email: String, _ attempts: ClosedRange<Int>, prefix: String = "wrong-password-", headers: HTTPFields = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for attempt in attempts {
            let response = try await tryLogIn(email, "\(prefix)\(attempt)", headers: headers)
            #expect(response.status == .unauthorized, "attempt \(attempt)", sourceLocation: sourceLocation)
        }
    }

    /// Checks a throttled answer: 429, a problem document of type too-many-attempts, and `Retry-After` a
    /// whole number of seconds in 1...900, which it returns (nil when the answer was not a 429).
    @discardableResult
    func expectThrottled(_ response: TestResponse, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> Int?
    {
        #expect(response.status == .tooManyRequests, comment, sourceLocation: sourceLocation)
        guard response.status == .tooManyRequests else { return nil }
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        let retryAfter = try #require(response.headers[.retryAfter], "no Retry-After", sourceLocation: sourceLocation)
        let seconds = try #require(Int(retryAfter), "Retry-After: \(retryAfter)", sourceLocation: sourceLocation)
        #expect((1...900).contains(seconds), "Retry-After: \(retryAfter)", sourceLocation: sourceLocation)
        let problem = try object(response)
        #expect(problem["status"] as? Int == 429, sourceLocation: sourceLocation)
        #expect(problem["type"] as? String == "https://data4help.example/problems/too-many-attempts", sourceLocation: sourceLocation)
        return seconds
    }
}
