import BrokerTestSupport
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The request lifecycle's events reach the company's webhook, signed and in order.
@Suite("Single request webhooks", .serialized)
struct SingleRequestWebhookTests {
    @Test("accept, new data and the person's revocation arrive as signed events, in order, and the cursor works")
    func lifecycleEvents() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let parties = try await harness.requestParties()
                let registered = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("lifecycle"))","secret":"\#(WebhookFixtures.secret)"}"#,
                    token: parties.company)
                #expect(registered.status == .ok)
                try await harness.uploadHeartRates([TestHarness.time(minutes: 0)], token: parties.person)
                let id = try await harness.acceptedRequestID(parties, subscriptionDays: 30)
                try await harness.uploadHeartRates([TestHarness.time(minutes: 5, day: "2025-12-24")], token: parties.person, firstValue: 80)
                #expect(await eventually { await receiver.log.delivered("lifecycle").count == 2 })
                _ = try await harness.request(.delete, "/v1/single-requests/\(id)/subscription", token: parties.person)
                #expect(await eventually { await receiver.log.delivered("lifecycle").count == 3 })

                let events = try await receiver.log.delivered("lifecycle").map { received in
                    #expect(WebhookSignature.verify(header: received.signature ?? "", body: received.body, secret: WebhookFixtures.secret))
                    return try #require(try JSONSerialization.jsonObject(with: received.body) as? [String: Any])
                }
                #expect(events.map { $0["type"] as? String } == ["single_request.accepted", "subscription.data_available", "subscription.ended"])
                let data = events.map { $0["data"] as? [String: Any] ?? [:] }
                #expect(data.allSatisfy { $0["requestId"] as? String == id })
                #expect(data[2]["endedBy"] as? String == "user")
                #expect(data[2]["reason"] as? String == "revoked")
                // The event's cursor fetches exactly the sample that arrived with it.
                let cursor = try #require(data[1]["cursor"] as? String)
                let fresh = try await harness.download(id, cursor: cursor, token: parties.company)
                #expect(fresh.items.map(\.value) == [80])
            }
        }
    }

    /// An upload's statement queues a subscription event with the arrival its cursor stands for; the cursor
    /// is sealed as a delivery claims it (migration 0049) and added to the stored object: the delivered `data`
    /// is the stored one plus `cursor`, a cursor of the event's kind for the event's request.
    @Test("a claimed subscription event's data is its stored object with the sealed cursor added")
    func cursorSealedAtClaim() throws {
        let key = SymmetricKey(size: .bits256)
        let request = UUID()
        for stored in [#"{"requestId": "\#(request.uuidString.lowercased())"}"#, "{}"] {
            let text = WebhookDeliveryStore.withCursor(stored, arrival: 42, request: request, type: "subscription.positions_available", key: key)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
            let cursor = try #require(object["cursor"] as? String)
            #expect(DownloadCursor.open(cursor, request: request, kind: .positions, key: key) == 42)
            #expect(DownloadCursor.open(cursor, request: request, kind: .samples, key: key) == nil)
            #expect(DownloadCursor.open(cursor, request: UUID(), kind: .positions, key: key) == nil)
            #expect(object.count == (stored == "{}" ? 1 : 2))
        }
    }

    @Test("a refusal and a block's refusals send the sender no webhook (issue 17); an acceptance does")
    func refusals() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let parties = try await harness.requestParties()
                _ = try await harness.request(
                    .put, "/v1/webhook", json: #"{"url":"\#(receiver.url("refusals"))","secret":"\#(WebhookFixtures.secret)"}"#,
                    token: parties.company)
                let accepted = try await harness.sentRequestID(parties)
                _ = try await harness.request(.post, "/v1/single-requests/\(accepted)/accept", token: parties.person)
                let first = try await harness.sentRequestID(parties)
                _ = try await harness.request(.post, "/v1/single-requests/\(first)/refuse", token: parties.person)
                // Shown pending to the company, which cancels it to ask again.
                #expect(try await harness.request(.post, "/v1/single-requests/\(first)/cancel", token: parties.company).status == .ok)
                _ = try await harness.sentRequestID(parties)
                _ = try await harness.request(.put, "/v1/me/blocks/\(parties.companyID)", token: parties.person)
                let queued = try await harness.sql(
                    "SELECT type FROM webhook_events WHERE third_party_id = '\(parties.companyID)' ORDER BY created_at")
                #expect(try queued.map { try $0.decode(String.self) } == ["single_request.accepted"])
                #expect(await eventually { await receiver.log.delivered("refusals").count == 1 })
                let delivered = try #require(await receiver.log.delivered("refusals").first)
                let event = try #require(try JSONSerialization.jsonObject(with: delivered.body) as? [String: Any])
                #expect(event["type"] as? String == "single_request.accepted")
            }
        }
    }
}
