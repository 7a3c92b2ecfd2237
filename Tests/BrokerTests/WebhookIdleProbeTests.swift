import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerDomain
@testable import BrokerServer

/// An idle delivery loop looks for due events far more often than it claims them: an event queued while
/// nothing else is going on goes out in a fraction of `pollInterval`, and due events that no claim can take
/// do not turn those looks into a claim each.
@Suite("Webhook delivery's idle probe", .serialized)
struct WebhookIdleProbeTests {
    /// The fixture's fast loop, but with a poll far longer than the tests: only the probe can find events.
    static func slowPoll(_ configuration: inout BrokerConfiguration) {
        WebhookFixtures.fast(&configuration)
        configuration.webhookDelivery.pollInterval = .seconds(60)
        configuration.webhookDelivery.idleProbeInterval = .milliseconds(50)
    }

    @Test("an event queued while the loop is idle is delivered long before the loop's next poll")
    func idleLoopFindsEventAtOnce() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: Self.slowPoll) { harness in
                let party = try await WebhookFixtures.company(harness, url: receiver.url("idle")).id
                // The loop's first claim (at its start) has found nothing; its next poll is a minute away.
                try await Task.sleep(for: .milliseconds(500))
                let start = ContinuousClock.now
                _ = try await harness.sql(
                    "SELECT enqueue_webhook_event('\(party)'::uuid, 'single_request.accepted', gen_random_uuid(), '{}'::jsonb)")
                #expect(await eventually(timeout: .seconds(10)) { await receiver.log.delivered("idle").count == 1 })
                let elapsed = ContinuousClock.now - start
                #expect(elapsed < .seconds(5), "delivered \(elapsed) after it was queued")
            }
        }
    }

    @Test("a due event waiting behind its request's earlier one costs one claim, not one at every look; a later event still goes at once")
    func blockedDueEventIsNotClaimedOverAndOver() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: Self.slowPoll) { harness in
                let party = try await WebhookFixtures.company(harness, url: receiver.url("blocked")).id
                let other = try await WebhookFixtures.company(harness, url: receiver.url("other")).id
                // The request's first event backs off for an hour; its second is due but must wait for it. Both
                // in one statement: the loop would take the first at once were it ever due.
                _ = try await harness.sql(
                    """
                    INSERT INTO webhook_events (third_party_id, type, request_id, data, attempts, next_attempt_at)
                    SELECT '\(party)'::uuid, 'single_request.accepted', r, jsonb_build_object('n', n), 2 - n,
                           now() + (2 - n) * interval '1 hour'
                    FROM gen_random_uuid() r, generate_series(1, 2) n ORDER BY n
                    """)
                // A claim checks each candidate for an earlier pending event of its request on this index; a look
                // never reads it. The looks go on every 50 ms, and their connection's counters reach the statistics
                // about once a second, so the window is a few seconds long.
                let checks = """
                    SELECT coalesce(sum(idx_scan), 0)::int8 FROM pg_stat_user_indexes WHERE indexrelname = 'webhook_events_pending_by_request'
                    """
                try await Task.sleep(for: .seconds(1.5))
                let before = try await harness.int(checks)
                try await Task.sleep(for: .seconds(3))
                let after = try await harness.int(checks)
                // 60 looks in 3 s, each with a claim that checks the waiting event: about 60. One claim in all: none.
                #expect(after - before < 10, "\(after - before) claims' checks in 3 s")
                #expect(await receiver.log.all("blocked").isEmpty)

                // An event queued now became due after the waiting one: the next look claims it.
                let start = ContinuousClock.now
                _ = try await harness.sql(
                    "SELECT enqueue_webhook_event('\(other)'::uuid, 'single_request.accepted', gen_random_uuid(), '{}'::jsonb)")
                #expect(await eventually(timeout: .seconds(10)) { await receiver.log.delivered("other").count == 1 })
                let elapsed = ContinuousClock.now - start
                #expect(elapsed < .seconds(5), "delivered \(elapsed) after it was queued, beside a waiting event")
            }
        }
    }
}
