import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The headers every answer carries, whatever produced it: generated handlers, streamed downloads, the
/// problem mapping, the router's own 404 and 405, the operations endpoints.
@Suite("Security headers", .serialized)
struct SecurityHeaderTests {
    @Test("every kind of response carries nosniff, DENY framing, the strict CSP and no-referrer; /v1 ones no-store")
    func everyResponse() async throws {
        let clock = ManualClock()
        try await TestHarness.run(configure: {
            $0.rateLimits.uploads = .perMinute(1)
            $0.rateLimits.clock = clock.standingWall
        }) { harness in
            let parties = try await harness.requestParties()
            let upload = try await harness.upload([("heart_rate", 72, "2026-03-01T08:00:00Z")], token: parties.person)
            let id = try await harness.acceptedRequestID(parties)
            /// One answer to check: what it is, the path it was sent to, the status it must have.
            struct Answer {
                let label: String, path: String, status: HTTPResponse.Status, response: TestResponse
            }
            func get(_ label: String, _ path: String, _ status: HTTPResponse.Status, token: String? = nil) async throws -> Answer {
                Answer(label: label, path: path, status: status, response: try await harness.request(.get, path, token: token))
            }
            let csvPath = "/v1/single-requests/\(id)/data?format=csv"
            let answers: [Answer] = [
                try await get("JSON 200", "/v1/me", .ok, token: parties.person),
                Answer(label: "upload 200", path: "/v1/me/samples", status: .ok, response: upload),
                try await get("problem 401", "/v1/me", .unauthorized),
                try await get("problem 403", "/v1/api-keys", .forbidden, token: parties.person),
                try await get("problem 404 under /v1", "/v1/nothing-here", .notFound),
                try await get("problem 404 outside /v1", "/nothing-here", .notFound),
                Answer(
                    label: "problem 405", path: "/v1/users", status: .methodNotAllowed,
                    response: try await harness.request(.put, "/v1/users", json: "{}")),
                Answer(
                    label: "problem 422", path: "/v1/me", status: .unprocessableContent,
                    response: try await harness.request(.patch, "/v1/me", json: #"{"email":"x@example.com"}"#, token: parties.person)),
                Answer(
                    label: "problem 429", path: "/v1/me/samples", status: .tooManyRequests,
                    response: try await harness.upload([("heart_rate", 73, "2026-03-01T08:01:00Z")], token: parties.person)),
                try await get("streamed CSV download", csvPath, .ok, token: parties.company),
                try await get("streamed JSON export", "/v1/me/export", .ok, token: parties.person),
                Answer(label: "OPTIONS 204", path: "/v1/me", status: .noContent, response: try await harness.request(.options, "/v1/me")),
                try await get("OpenAPI document", "/openapi.yaml", .ok),
                try await get("liveness", "/health/live", .ok),
                try await get("readiness", "/health/ready", .ok),
                try await get("metrics without the metrics token", "/metrics", .notFound),
            ]
            for answer in answers {
                let (label, headers) = (answer.label, answer.response.headers)
                #expect(answer.response.status == answer.status, "\(label): \(answer.response.status) \(harness.text(answer.response))")
                #expect(headers[.xContentTypeOptions] == "nosniff", "\(label)")
                #expect(headers[HTTPField.Name("X-Frame-Options")!] == "DENY", "\(label)")
                #expect(headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer", "\(label)")
                #expect(
                    headers[.contentSecurityPolicy] == "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'", "\(label)")
                #expect(headers[.strictTransportSecurity] == nil, "\(label): plain HTTP")
                if answer.path.hasPrefix("/v1/") {
                    #expect(headers[.cacheControl] == "no-store", "\(label)")
                }
            }
            let kinds = Dictionary(uniqueKeysWithValues: answers.map { ($0.label, $0.response.headers[.contentType] ?? "-") })
            #expect(kinds["streamed CSV download"] == "text/csv; charset=utf-8")
            #expect(kinds["problem 404 under /v1"] == "application/problem+json")
            #expect(kinds["problem 429"] == "application/problem+json")
        }
    }
}
