@testable import Broker

/// What the webhook suites share: a registration secret, and servers that deliver in milliseconds.
enum WebhookFixtures {
    static let secret = "whsec_0123456789abcdef"

    /// Local receivers allowed, and the delivery loop's intervals shortened from seconds to milliseconds.
    static func fast(_ configuration: inout BrokerConfiguration) {
        configuration.webhookAllowPrivate = true
        configuration.webhookDelivery.pollInterval = .milliseconds(100)
        configuration.webhookDelivery.backoffBase = .milliseconds(200)
        configuration.webhookDelivery.connectTimeout = .seconds(1)
        configuration.webhookDelivery.requestTimeout = .seconds(2)
        configuration.webhookDelivery.lease = .seconds(5)
    }
}
