import BrokerOpenAPI
import BrokerTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Operations")
struct OperationsTests {
    @Test("/health/live answers 200")
    func liveness() async throws {
        try await TestHarness.run { harness in
            let response = try await harness.request(.get, "/health/live")
            #expect(response.status == .ok)
            #expect(try harness.object(response)["status"] as? String == "ok")
        }
    }

    @Test("/health/ready answers 200 with the build's schema version on a migrated database")
    func readiness() async throws {
        try await TestHarness.run { harness in
            // The probe gives the database 3 s; under the whole suite on two cores a fresh pool's first
            // connection can take longer, and then 503 is the right answer. Ask again until it is ready.
            var response = try await harness.request(.get, "/health/ready")
            for _ in 0..<15 where response.status == .serviceUnavailable {
                try await Task.sleep(for: .seconds(1))
                response = try await harness.request(.get, "/health/ready")
            }
            #expect(response.status == .ok)
            let body = try harness.object(response)
            #expect(body["status"] as? String == "ready")
            #expect(body["schemaVersion"] as? Int == (try Migration.bundled().last?.version))
        }
    }

    @Test("/health/ready answers 503 on a database that was never migrated, while /health/live stays 200")
    func notReadyWithoutSchema() async throws {
        try await TestDatabase.withEmptyDatabase { url in
            try await TestHarness.run(databaseURL: url, expectedLogs: ServerLog.unmigratedDatabase) { harness in
                let ready = try await harness.request(.get, "/health/ready")
                #expect(ready.status == .serviceUnavailable)
                #expect(ready.headers[.contentType] == "application/problem+json")
                #expect(try await harness.request(.get, "/health/live").status == .ok)
            }
        }
    }

    @Test("with the database unreachable, API calls answer 503 problem+json with Retry-After within seconds; readiness 503, liveness 200")
    func databaseUnreachable() async throws {
        // Nothing listens on port 1: every connection attempt is refused, as while PostgreSQL restarts.
        let nowhere = try DatabaseURL("postgres://d4h:d4h@127.0.0.1:1/d4h?sslmode=disable")
        // The watchdog's alert, and the background work that cannot connect.
        let unreachable: [ExpectedLog] = [.error("database unreachable"), .warning("Connection refused"), .error("Connection refused")]
        try await TestHarness.run(databaseURL: nowhere, expectedLogs: unreachable) { harness in
            // Until the watchdog's first probe has failed the server cannot know (a request that needs no
            // database, such as this malformed token's, is answered 401 meanwhile): on a loaded machine that
            // probe came after the first request. Readiness says when it knows.
            for _ in 0..<150 where try await harness.request(.get, "/health/ready").status != .serviceUnavailable {
                try await Task.sleep(for: .milliseconds(100))
            }
            let clock = ContinuousClock()
            var statuses: [HTTPResponse.Status] = []
            let elapsed = try await clock.measure {
                for path in ["/v1/me", "/v1/me/samples?type=heart_rate"] {
                    let response = try await harness.request(.get, path, token: "any-token")
                    statuses.append(response.status)
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(response.headers[.retryAfter] == "5")
                    #expect(String(buffer: response.body).contains("database-unavailable"))
                }
            }
            #expect(statuses == [.serviceUnavailable, .serviceUnavailable])
            // The pool alone would queue these until its circuit breaker trips (about a minute).
            #expect(elapsed < .seconds(15), "took \(elapsed)")
            #expect(try await harness.request(.get, "/health/ready").status == .serviceUnavailable)
            #expect(try await harness.request(.get, "/health/live").status == .ok)
        }
    }

    /// The value of the sample line that starts with `series` (name and labels), if any.
    private func sample(_ metrics: String, _ series: String) -> Double? {
        metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    /// The scraper's token in the tests' servers.
    static let metricsToken = "metrics-token-for-the-tests-0123456789"
    static func withMetrics(_ configuration: inout BrokerConfiguration) { configuration.metricsToken = metricsToken }

    @Test("/metrics counts requests by route template, method and status, with latency buckets")
    func metrics() async throws {
        try await TestHarness.run(configure: Self.withMetrics) { harness in
            #expect(try await harness.request(.get, "/v1/me").status == .unauthorized)
            #expect(try await harness.request(.get, "/v1/me").status == .unauthorized)
            let response = try await harness.request(.get, "/metrics", token: Self.metricsToken)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = harness.text(response)
            #expect(text.contains("# TYPE http_requests_total counter"))
            #expect(sample(text, #"http_requests_total{route="/v1/me",method="GET",status="401"}"#) == 2, "\(text)")
            #expect(text.contains(#"http_request_duration_seconds_bucket{route="/v1/me",method="GET",status="401",le="#), "\(text)")
            #expect(sample(text, #"http_request_duration_seconds_count{route="/v1/me",method="GET",status="401"}"#) == 2)
        }
    }

    @Test("/metrics labels a request by its route template, never by the ids in its path")
    func metricsUseTemplates() async throws {
        try await TestHarness.run(configure: Self.withMetrics) { harness in
            let token = try await harness.activeCompany()
            let keyID = UUID().uuidString.lowercased()
            #expect(try await harness.request(.delete, "/v1/api-keys/\(keyID)", token: token).status == .notFound)
            let unknown = "no-such-path-\(UUID().uuidString.lowercased())"
            #expect(try await harness.request(.get, "/v1/\(unknown)").status == .notFound)
            let text = harness.text(try await harness.request(.get, "/metrics", token: Self.metricsToken))
            #expect(!text.contains(keyID))
            #expect(!text.contains(unknown))
            #expect(text.contains(#"method="DELETE",status="404""#), "\(text)")
            #expect(text.contains(#"http_requests_total{route="/v1/sessions",method="POST",status="201"}"#))
        }
    }

    /// Issue 17, item 12: `/metrics` answered anyone, with every route's request rate and latency.
    @Test("/metrics: 404 on a server without METRICS_TOKEN; 401 without the token, with a wrong one or an account's; 200 with it")
    func metricsNeedTheToken() async throws {
        try await TestHarness.run { harness in
            let closed = try await harness.request(.get, "/metrics")
            #expect(closed.status == .notFound)
            #expect(!harness.text(closed).contains("http_requests_total"))
        }
        try await TestHarness.run(configure: Self.withMetrics) { harness in
            let company = try await harness.activeCompany()
            for token in [nil, "wrong", String(Self.metricsToken.dropLast()) + "x", company] {
                let response = try await harness.request(.get, "/metrics", token: token)
                #expect(response.status == .unauthorized, "\(String(describing: token))")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
                #expect(!harness.text(response).contains("http_requests_total"))
            }
            let response = try await harness.request(.get, "/metrics", token: Self.metricsToken)
            #expect(response.status == .ok)
            #expect(harness.text(response).contains("http_requests_total"))
        }
    }

    @Test("METRICS_TOKEN shorter than 32 characters stops the server at start")
    func shortMetricsToken() throws {
        #expect(throws: ConfigurationError.self) {
            _ = try BrokerConfiguration(reader: ConfigReaderForTests.environment(["METRICS_TOKEN": "short"]))
        }
    }

    @Test("GET /openapi.yaml serves the contract the server was built from")
    func openAPIDocument() async throws {
        try await TestHarness.run { harness in
            let response = try await harness.request(.get, "/openapi.yaml")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.contains("yaml") == true)
            let text = harness.text(response)
            #expect(text.hasPrefix("openapi: 3.1.0"))
            let source = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Sources/BrokerOpenAPI/openapi.yaml")
            #expect(text == (try String(contentsOf: source, encoding: .utf8)))
        }
    }
}
