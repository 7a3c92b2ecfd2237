import Foundation
import Testing

@testable import BrokerDomain

/// What a delivery posts: `{"id", "type", "createdAt", "data"}`, valid JSON whatever the stored type holds.
@Suite("Webhook delivery body")
struct WebhookBodyTests {
    func event(type: String, data: String = #"{"n": 1}"#) -> WebhookDeliveryStore.ClaimedEvent {
        WebhookDeliveryStore.ClaimedEvent(
            id: UUID(), thirdPartyID: UUID(), type: type, createdAt: Date(timeIntervalSince1970: 1_790_000_000), data: data, attempt: 1,
            url: nil, secret: nil)
    }

    @Test(
        "every type the server queues, and one that would need escaping, give a body that parses",
        arguments: [
            "subscription.data_available", "subscription.positions_available", "single_request.accepted", #"odd "type" \ é"#,
        ])
    func bodyParses(_ type: String) throws {
        let event = event(type: type)
        let body = WebhookDelivery.body(of: event)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(object["type"] as? String == type)
        #expect(object["id"] as? String == event.id.uuidString.lowercased())
        #expect(object["createdAt"] as? String == "2026-09-21T14:13:20Z")
        #expect((object["data"] as? [String: Any])?["n"] as? Int == 1)
    }
}
