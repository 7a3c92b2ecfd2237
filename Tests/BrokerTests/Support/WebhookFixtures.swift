import BrokerTestSupport
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// What the webhook suites share: a registration secret, and servers that deliver in milliseconds.
enum WebhookFixtures {
    static let secret = "whsec_0123456789abcdef"

    /// Local receivers allowed, and the delivery loop's intervals shortened from seconds to milliseconds.
    static func fast(_ configuration: inout BrokerConfiguration) {
        configuration.webhookAllowPrivate = true
        configuration.webhookDelivery.pollInterval = .milliseconds(100)
        // Shorter than the poll, so that every webhook test runs the idle loop's looks too.
        configuration.webhookDelivery.idleProbeInterval = .milliseconds(20)
        configuration.webhookDelivery.backoffBase = .milliseconds(200)
        configuration.webhookDelivery.connectTimeout = .seconds(1)
        configuration.webhookDelivery.requestTimeout = .seconds(2)
        configuration.webhookDelivery.lease = .seconds(5)
    }

    /// A company with a webhook: its token and account id.
    static func company(_ harness: TestHarness, url: String, secret: String = WebhookFixtures.secret) async throws -> (token: String, id: String) {
        let token = try await harness.activeCompany(TestHarness.Company(vatNumber: TestHarness.uniqueVATNumber()))
        let response = try await harness.request(.put, "/v1/webhook", json: #"{"url":"\#(url)","secret":"\#(secret)"}"#, token: token)
        try #require(response.status == .ok, "PUT /v1/webhook answered \(response.status): \(harness.text(response))")
        return (token, try await harness.accountID(token))
    }
}
