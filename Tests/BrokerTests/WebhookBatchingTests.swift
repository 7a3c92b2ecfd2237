import BrokerTestSupport
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// The delivery loop claims several rounds of posts ahead and records outcomes in batches: neither may
/// let one receiver's pace hold up another's, nor lose an outcome or a claimed event when a server stops.
@Suite("Webhook delivery batching", .serialized)
struct WebhookBatchingTests {

    /// Queues `requests × perRequest` events for a party in one statement, request by request, in order.
    func enqueue(_ harness: TestHarness, for party: String, requests: Int, perRequest: Int = 1) async throws {
        _ = try await harness.sql(
            """
            SELECT enqueue_webhook_event('\(party)'::uuid, 'single_request.accepted', r, jsonb_build_object('n', n))
            FROM (SELECT gen_random_uuid() AS r, i FROM generate_series(1, \(requests)) i) requests, generate_series(1, \(perRequest)) n
            ORDER BY i, n
            """)
    }

    func count(_ harness: TestHarness, _ party: String, status: String) async throws -> Int {
        try await harness.int("SELECT count(*) FROM webhook_events WHERE third_party_id = '\(party)' AND status = '\(status)'")
    }

    @Test("a hanging receiver's backlog does not slow another company's backlog: all of it is delivered and recorded in seconds")
    func hangingBesideFast() async throws {
        try await WebhookReceiver.run { receiver in
            await receiver.log.hang("stuck")
            try await TestHarness.run(configure: {
                WebhookFixtures.fast(&$0)
                // Far longer than the test's bound: the stuck posts stay in flight throughout.
                $0.webhookDelivery.requestTimeout = .seconds(20)
                $0.webhookDelivery.lease = .seconds(60)
                $0.webhookDelivery.maxInFlight = 8
                $0.webhookDelivery.maxInFlightPerThirdParty = 4
            }) { harness in
                let stuck = try await WebhookFixtures.company(harness, url: receiver.url("stuck"))
                let fast = try await WebhookFixtures.company(harness, url: receiver.url("fast"))
                // Both backlogs queued before the loop's next look, the hanging party's first. The fast
                // party's events come in chains of three per request: each next one is only due once the
                // one before it is recorded as delivered, so a record that waited for the hanging posts
                // would stall the chain.
                try await enqueue(harness, for: stuck.id, requests: 40)
                try await enqueue(harness, for: fast.id, requests: 20, perRequest: 3)
                let start = ContinuousClock.now
                #expect(
                    await eventually(timeout: .seconds(6)) {
                        try await count(harness, fast.id, status: "delivered") == 60
                    })
                let elapsed = ContinuousClock.now - start
                #expect(elapsed < .seconds(6), "the fast party's 60 events took \(elapsed)")
                #expect(await receiver.log.delivered("fast").count == 60)
                #expect(Set(await receiver.log.delivered("fast").compactMap(\.eventID)).count == 60)
                // Meanwhile the hanging party's posts were in flight, holding only its own share of the slots.
                #expect(await receiver.log.arrived("stuck") == 4)
                #expect(await receiver.log.delivered("stuck").isEmpty)
                #expect(try await count(harness, stuck.id, status: "delivered") == 0)
                await receiver.log.release("stuck")
                #expect(
                    await eventually(timeout: .seconds(20)) {
                        try await count(harness, stuck.id, status: "delivered") == 40
                    })
            }
        }
    }

    @Test("outcomes waiting for their batch are recorded before a stopping server returns")
    func flushOnShutdown() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                let configure: @Sendable (inout BrokerConfiguration) -> Void = {
                    WebhookFixtures.fast(&$0)
                    // A batch that would wait far longer than the test: only the shutdown writes it.
                    $0.webhookDelivery.recordDelay = .seconds(120)
                    $0.webhookDelivery.recordBatch = 1000
                }
                let stopping = Mutex(ContinuousClock.now)
                try await TestHarness.run(databaseURL: url, configure: configure) { harness in
                    let party = try await WebhookFixtures.company(harness, url: receiver.url("flush")).id
                    try await enqueue(harness, for: party, requests: 5)
                    #expect(await eventually { await receiver.log.delivered("flush").count == 5 })
                    // Posted and answered, not yet recorded.
                    #expect(try await count(harness, party, status: "delivered") == 0)
                    stopping.withLock { $0 = .now }
                }
                // The stop wrote the batch at once: it did not wait for the batch's delay.
                #expect(ContinuousClock.now - stopping.withLock { $0 } < .seconds(10))
                let (delivered, attempts) = try await TestDatabase.withClient(url) { client in
                    let delivered = try await client.query(
                        "SELECT count(*)::int FROM webhook_events WHERE status = 'delivered' AND delivered_at IS NOT NULL",
                        logger: TestDatabase.logger
                    ).collect().first!.decode(Int.self)
                    let attempts = try await client.query(
                        "SELECT count(*)::int FROM webhook_attempts WHERE status_code = 200 AND error IS NULL", logger: TestDatabase.logger
                    ).collect().first!.decode(Int.self)
                    return (delivered, attempts)
                }
                #expect(delivered == 5)
                #expect(attempts == 5)
            }
        }
    }

    @Test("events claimed ahead but not yet posted are given back when a server stops, not left to their lease")
    func releaseOnShutdown() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                await receiver.log.hang("slow")
                // One post at a time, leases of 60 s and posts of at most 10 s: five rounds are claimed ahead.
                let configure: @Sendable (inout BrokerConfiguration) -> Void = {
                    WebhookFixtures.fast(&$0)
                    $0.webhookDelivery.requestTimeout = .seconds(10)
                    $0.webhookDelivery.lease = .seconds(60)
                    $0.webhookDelivery.maxInFlight = 1
                    $0.webhookDelivery.maxInFlightPerThirdParty = 1
                }
                try await TestHarness.run(databaseURL: url, configure: configure) { harness in
                    let party = try await WebhookFixtures.company(harness, url: receiver.url("slow")).id
                    try await enqueue(harness, for: party, requests: 5)
                    #expect(await eventually { await receiver.log.arrived("slow") == 1 })
                    // The first is in flight; the others are claimed (leased for a minute) and waiting.
                    #expect(try await harness.int("SELECT count(*) FROM webhook_events WHERE attempts = 1") == 5)
                    // The hanging post is answered soon after the stop begins, so the stop does not wait for its timeout.
                    Task {
                        try await Task.sleep(for: .milliseconds(500))
                        await receiver.log.release("slow")
                    }
                }
                // A second server delivers the other four at once, well inside the first one's leases.
                try await TestHarness.run(databaseURL: url, configure: configure) { harness in
                    let party = try #require(try await harness.sql("SELECT third_party_id::text FROM webhooks").first).decode(String.self)
                    let start = ContinuousClock.now
                    #expect(await eventually(timeout: .seconds(8)) { try await count(harness, party, status: "delivered") == 5 })
                    #expect(ContinuousClock.now - start < .seconds(8))
                    #expect(Set(await receiver.log.delivered("slow").compactMap(\.eventID)).count == 5)
                }
            }
        }
    }
}
