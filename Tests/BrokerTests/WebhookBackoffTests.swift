import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

@Suite("Webhook retry backoff")
struct WebhookBackoffTests {
    @Test("retries wait 10 s, 20 s, 40 s … doubling up to an hour")
    func exponentialAndCapped() {
        let configuration = WebhookDeliveryConfiguration()
        let delays = (1...11).map { configuration.retryDelay(afterAttempt: $0, jitter: 0) }
        #expect(Array(delays.prefix(9)) == [10, 20, 40, 80, 160, 320, 640, 1280, 2560].map { Duration.seconds($0) })
        #expect(Array(delays.suffix(2)) == [.seconds(3600), .seconds(3600)])
        #expect(configuration.retryDelay(afterAttempt: 1000, jitter: 0) == .seconds(3600))
    }

    @Test("jitter spreads each delay by at most a quarter either way")
    func jitter() {
        let configuration = WebhookDeliveryConfiguration()
        let delays = (0..<200).map { _ in configuration.retryDelay(afterAttempt: 3) }
        #expect(delays.allSatisfy { $0 >= .seconds(30) && $0 <= .seconds(50) })
        #expect(Set(delays).count > 100, "the delays should differ")
    }
}
