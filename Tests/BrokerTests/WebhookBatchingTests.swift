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

    @Test("a fast receiver is claimed deeper; once it slows, what it holds beyond the shallow depth goes back at once")
    func fastReceiverClaimedDeeper() async throws {
        try await WebhookReceiver.run { receiver in
            // Shallow: (60 - 5) / 20 = 2 rounds, 4 events. Fast (posts within 2 s): (60 - 20 - 5) / 2 = 17
            // rounds, 34 events. The timeout outlasts the test's hang, so no post is cut and sent twice.
            var delivery = WebhookDeliveryConfiguration()
            delivery.requestTimeout = .seconds(20)
            delivery.lease = .seconds(60)
            delivery.fastPost = .seconds(2)
            delivery.maxInFlight = 2
            delivery.maxInFlightPerThirdParty = 2
            #expect(delivery.claimDepth == 2)
            #expect(delivery.fastClaimDepth == 17)
            let configure: @Sendable (inout BrokerConfiguration) -> Void = { [delivery] in
                WebhookFixtures.fast(&$0)
                // The fixture's short poll and backoff, with the depths above.
                let (poll, backoff) = ($0.webhookDelivery.pollInterval, $0.webhookDelivery.backoffBase)
                $0.webhookDelivery = delivery
                $0.webhookDelivery.pollInterval = poll
                $0.webhookDelivery.backoffBase = backoff
            }
            try await TestHarness.run(configure: configure) { harness in
                let party = try await WebhookFixtures.company(harness, url: receiver.url("deep")).id
                // The first 20 posts are answered at once, so the party is fast (after 2) while its backlog is
                // claimed; then every post hangs.
                await receiver.log.hang("deep", after: 20)
                try await enqueue(harness, for: party, requests: 200)
                // Claimed and not delivered, given back or not (a give-back leaves the attempt at 1 or more).
                let attempted = "SELECT count(*) FROM webhook_events WHERE third_party_id = '\(party)' AND status = 'pending' AND attempts > 0"
                let deep = await eventually { try await harness.int(attempted) >= 20 }
                let claimed = try await harness.int(attempted)
                #expect(deep, "claimed \(claimed) at most, not the fast depth's 34")
                // Once its posts run past 2 s it is shallow again, and gives back all but 4 (2 posting, 2
                // waiting) long before their one-minute lease ends.
                let start = ContinuousClock.now
                let leased =
                    "SELECT count(*) FROM webhook_events WHERE third_party_id = '\(party)' AND status = 'pending' AND next_attempt_at > now() + interval '30 seconds'"
                let givenBack = await eventually(timeout: .seconds(10)) { try await harness.int(leased) == 4 }
                let stillLeased = try await harness.int(leased)
                #expect(givenBack, "still leased: \(stillLeased), not the shallow depth's 4")
                #expect(ContinuousClock.now - start < .seconds(10))
                #expect(await receiver.log.arrived("deep") == 22)
                // Given back, an event's attempt is taken back again: none is counted twice.
                #expect(try await harness.int("SELECT max(attempts) FROM webhook_events") == 1)
                await receiver.log.release("deep")
                #expect(await eventually(timeout: .seconds(30)) { try await count(harness, party, status: "delivered") == 200 })
                #expect(await receiver.log.delivered("deep").count == 200)
                #expect(Set(await receiver.log.delivered("deep").compactMap(\.eventID)).count == 200)
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

    @Test("a batch whose record fails is written again, not dropped: no event is posted twice")
    func failedRecordIsRequeued() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(
                configure: {
                    WebhookFixtures.fast(&$0)
                    // A record blocked by the test's lock gives up at once instead of waiting 5 s.
                    $0.database.lockTimeout = .milliseconds(200)
                }, expectedLogs: [.warning("recording webhook attempts failed; kept to be written again")]
            ) { harness in
                let party = try await WebhookFixtures.company(harness, url: receiver.url("kept")).id
                try await TestDatabase.withClient(harness.databaseURL) { pool in
                    try await pool.withConnection { connection in
                        // Holds off every record (they insert into webhook_attempts) while the posts go out.
                        _ = try await connection.query("BEGIN", logger: TestDatabase.logger)
                        _ = try await connection.query("LOCK TABLE webhook_attempts IN SHARE MODE", logger: TestDatabase.logger)
                        try await enqueue(harness, for: party, requests: 5)
                        #expect(await eventually { await receiver.log.delivered("kept").count == 5 })
                        // Several records fail meanwhile (each after the lock timeout).
                        try await Task.sleep(for: .seconds(1))
                        _ = try await connection.query("COMMIT", logger: TestDatabase.logger)
                    }
                }
                #expect(await eventually { try await count(harness, party, status: "delivered") == 5 })
                // Past the events' 5 s lease: an outcome that had been dropped would have been posted again by now.
                try await Task.sleep(for: .seconds(6))
                #expect(await receiver.log.all("kept").count == 5)
                #expect(try await harness.int("SELECT max(attempts) FROM webhook_events") == 1)
                #expect(try await harness.int("SELECT count(*) FROM webhook_attempts") == 5)
            }
        }
    }

    @Test("a post under way when the server stops is cut short and recorded within the graceful deadline")
    func postUnderWayAtStopIsRecorded() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                await receiver.log.hang("late")
                let configure: @Sendable (inout BrokerConfiguration) -> Void = {
                    WebhookFixtures.fast(&$0)
                    // A post that would outlast `d4h serve`'s graceful deadline (10 s) on its own timeout.
                    $0.webhookDelivery.requestTimeout = .seconds(30)
                    $0.webhookDelivery.lease = .seconds(90)
                    $0.webhookDelivery.shutdownPostWait = .seconds(1)
                    $0.webhookDelivery.shutdownRecordWait = .seconds(2)
                }
                let stopping = Mutex(ContinuousClock.now)
                try await TestHarness.run(databaseURL: url, configure: configure) { harness in
                    let party = try await WebhookFixtures.company(harness, url: receiver.url("late")).id
                    try await enqueue(harness, for: party, requests: 1)
                    #expect(await eventually { await receiver.log.arrived("late") == 1 })
                    stopping.withLock { $0 = .now }
                }
                let took = ContinuousClock.now - stopping.withLock { $0 }
                await receiver.log.release("late")
                #expect(took < .seconds(10), "the stop took \(took)")
                let recorded = try await TestDatabase.withClient(url) { client in
                    try await client.query(
                        "SELECT e.attempts, e.status, coalesce(a.error, '') FROM webhook_events e JOIN webhook_attempts a ON a.event_id = e.id",
                        logger: TestDatabase.logger
                    ).collect().map { try $0.decode((Int32, String, String).self) }
                }
                // Recorded as a failed attempt: the event stays pending and is posted again later.
                #expect(recorded.map(\.0) == [1])
                #expect(recorded.map(\.1) == ["pending"])
                #expect(recorded.map(\.2) == ["cut short: the server was stopping"])
            }
        }
    }

    @Test(
        "a claim stays an index probe, and checks only its first candidates, when the statistics of webhook_events predate a burst of pending events",
        arguments: [true, false])
    func claimWithStaleStatistics(analyzedHistory: Bool) async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                let party = Mutex("")
                try await TestHarness.run(databaseURL: url, configure: WebhookFixtures.fast) { harness in
                    let id = try await WebhookFixtures.company(harness, url: receiver.url("stale")).id
                    party.withLock { $0 = id }
                }
                let id = party.withLock { $0 }
                let (touched, probes) = try await TestDatabase.withClient(url) { pool in
                    try await pool.withConnection { connection in
                        let logger = TestDatabase.logger
                        _ = try await connection.query("ALTER TABLE webhook_events SET (autovacuum_enabled = false)", logger: logger)
                        if analyzedHistory {
                            // A history of delivered events, analyzed (nothing pending), then the burst.
                            _ = try await connection.query(
                                """
                                INSERT INTO webhook_events (third_party_id, type, request_id, data, status, delivered_at)
                                SELECT \(UUID(uuidString: id)!), 'single_request.accepted', gen_random_uuid(), '{}', 'delivered', now()
                                FROM generate_series(1, 20000)
                                """, logger: logger)
                            _ = try await connection.query("ANALYZE webhook_events", logger: logger)
                        }
                        // Otherwise the table was never analyzed: the benchmark's backlog, where the planner sorted
                        // every pending row and checked each for an earlier event of its request.
                        _ = try await connection.query(
                            """
                            SELECT count(enqueue_webhook_event(\(UUID(uuidString: id)!), 'single_request.accepted', gen_random_uuid(), '{}'))
                            FROM generate_series(1, 5000)
                            """, logger: logger)
                        return try await connection.withTransaction(logger: logger) { connection in
                            let claimed = try await WebhookDeliveryStore.claimInTransaction(
                                limit: 40, defaultRoom: 40, room: [:], lease: .seconds(60), on: connection, logger: logger)
                            #expect(claimed.count == 40)
                            // Rows of the table this transaction read: a probe per candidate reads none or a
                            // few; a scan of a whole index (or of the table) per candidate read 5,000 each.
                            let touched = try await connection.query(
                                """
                                SELECT (coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::int8
                                FROM pg_stat_xact_user_tables WHERE relname = 'webhook_events'
                                """, logger: logger
                            ).collect().first!.decode(Int64.self)
                            // The checks for an earlier event of the same request: one per candidate (4 × 40), not
                            // one per pending event.
                            let probes = try await connection.query(
                                """
                                SELECT pg_stat_get_xact_numscans('webhook_events_pending_by_request'::regclass)
                                """, logger: logger
                            ).collect().first!.decode(Int64.self)
                            return (touched, probes)
                        }
                    }
                }
                #expect(touched < 2_000, "the claim read \(touched) rows")
                #expect(probes <= 160, "the claim checked \(probes) candidates")
            }
        }
    }

    @Test("events waiting behind their request's backed-off first event do not fill a claim: another party's event is claimed")
    func blockedChainDoesNotStarveOthers() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                let parties = Mutex<[String]>([])
                try await TestHarness.run(databaseURL: url, configure: WebhookFixtures.fast) { harness in
                    let chain = try await WebhookFixtures.company(harness, url: receiver.url("chain")).id
                    let other = try await WebhookFixtures.company(harness, url: receiver.url("other")).id
                    parties.withLock { $0 = [chain, other] }
                }
                let ids = parties.withLock { $0 }.map { UUID(uuidString: $0)! }
                let claimed = try await TestDatabase.withClient(url) { pool in
                    try await pool.withConnection { connection in
                        let logger = TestDatabase.logger
                        // One request's 201 events (a run's, say): the first backed off for a minute after a failed
                        // post, the 200 behind it due now and earlier than anything else.
                        _ = try await connection.query(
                            """
                            WITH r AS (SELECT gen_random_uuid() AS id)
                            SELECT count(enqueue_webhook_event(\(ids[0]), 'single_request.accepted', r.id, jsonb_build_object('n', n)))
                            FROM r, generate_series(1, 201) n
                            """, logger: logger)
                        _ = try await connection.query(
                            """
                            UPDATE webhook_events SET attempts = 1, next_attempt_at = now() + interval '1 minute'
                            WHERE seq = (SELECT min(seq) FROM webhook_events)
                            """, logger: logger)
                        _ = try await connection.query(
                            "SELECT enqueue_webhook_event(\(ids[1]), 'single_request.accepted', gen_random_uuid(), '{}')", logger: logger)
                        return try await WebhookDeliveryStore.claim(
                            limit: 40, defaultRoom: 40, room: [:], lease: .seconds(60), on: connection, logger: logger)
                    }
                }
                #expect(claimed.map(\.thirdPartyID) == [ids[1]])
            }
        }
    }

    @Test("an event erased with its company while its post was out does not fail its batch: the others are recorded")
    func erasedEventDoesNotFailItsBatch() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestDatabase.withMigratedDatabase { url in
                let parties = Mutex<[String]>([])
                try await TestHarness.run(databaseURL: url, configure: WebhookFixtures.fast) { harness in
                    for name in ["kept", "erased", "erasing"] {
                        let id = try await WebhookFixtures.company(harness, url: receiver.url(name)).id
                        parties.withLock { $0.append(id) }
                    }
                }
                let ids = parties.withLock { $0 }.map { UUID(uuidString: $0)! }
                let (kept, erased, erasing) = (ids[0], ids[1], ids[2])
                let logger = TestDatabase.logger
                try await TestDatabase.withClient(url) { pool in
                    let claimed = try await pool.withConnection { connection in
                        _ = try await connection.query(
                            """
                            SELECT enqueue_webhook_event(p, 'single_request.accepted', gen_random_uuid(), '{}')
                            FROM unnest(\(ids)::uuid[]) p, generate_series(1, 2)
                            """, logger: logger)
                        return try await WebhookDeliveryStore.claim(
                            limit: 40, defaultRoom: 40, room: [:], lease: .seconds(60), on: connection, logger: logger)
                    }
                    #expect(claimed.count == 6)
                    let batch = claimed.map {
                        WebhookDeliveryStore.Finished(
                            event: $0, outcome: .init(delivered: true, statusCode: 200, error: nil, durationMs: 3), retryDelay: .seconds(1))
                    }
                    // One company erased before the record, another while it runs (its delete not yet committed).
                    _ = try await pool.withConnection { try await $0.query("DELETE FROM accounts WHERE id = \(erased)", logger: logger) }
                    try await TestDatabase.withClient(url) { other in
                        try await other.withConnection { eraser in
                            _ = try await eraser.query("BEGIN", logger: logger)
                            _ = try await eraser.query("DELETE FROM accounts WHERE id = \(erasing)", logger: logger)
                            async let recorded: Void = pool.withConnection { connection in
                                try await WebhookDeliveryStore.record(batch, horizon: .seconds(3600), on: connection, logger: logger)
                            }
                            try await Task.sleep(for: .milliseconds(300))
                            _ = try await eraser.query("COMMIT", logger: logger)
                            try await recorded
                        }
                    }
                    let rows = try await pool.withConnection { connection in
                        try await connection.query(
                            """
                            SELECT e.third_party_id, e.status, (SELECT count(*)::int FROM webhook_attempts a WHERE a.event_id = e.id)
                            FROM webhook_events e
                            """, logger: logger
                        ).collect().map { try $0.decode((UUID, String, Int).self) }
                    }
                    #expect(rows.count == 2)
                    #expect(rows.allSatisfy { $0.0 == kept && $0.1 == "delivered" && $0.2 == 1 }, "\(rows) kept \(kept)")
                    // No attempt outlives its event (no foreign key says so since migration 0054: the record's locks do).
                    let attempts = try await pool.withConnection { connection in
                        try await connection.query("SELECT count(*)::int FROM webhook_attempts", logger: logger).collect().first?.decode(Int.self)
                    }
                    #expect(attempts == 2)
                }
            }
        }
    }

    @Test("an erased company's recorded attempts go with its events")
    func erasureTakesAttempts() async throws {
        try await WebhookReceiver.run { receiver in
            try await TestHarness.run(configure: WebhookFixtures.fast) { harness in
                let erased = try await WebhookFixtures.company(harness, url: receiver.url("gone")).id
                let kept = try await WebhookFixtures.company(harness, url: receiver.url("stays")).id
                try await enqueue(harness, for: erased, requests: 3)
                try await enqueue(harness, for: kept, requests: 2)
                #expect(await eventually { try await harness.int("SELECT count(*) FROM webhook_attempts") == 5 })
                _ = try await harness.sql("DELETE FROM accounts WHERE id = '\(erased)'")
                #expect(try await harness.int("SELECT count(*) FROM webhook_events") == 2)
                #expect(try await harness.int("SELECT count(*) FROM webhook_attempts") == 2)
                #expect(
                    try await harness.int(
                        "SELECT count(*) FROM webhook_attempts a WHERE NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.id = a.event_id)") == 0)
                // A delete from an older snapshot could miss an attempt recorded meanwhile: refused, as the key's
                // cascade refused it (a serialization failure), rather than leave one behind.
                let refused = try await TestDatabase.withClient(harness.databaseURL) { client in
                    try await client.withConnection { connection in
                        _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: TestDatabase.logger)
                        let refused: Bool
                        do {
                            _ = try await connection.query(
                                "DELETE FROM accounts WHERE id = \(UUID(uuidString: kept)!)", logger: TestDatabase.logger)
                            refused = false
                        } catch { refused = String(reflecting: error).contains("40001") }
                        _ = try await connection.query("ROLLBACK", logger: TestDatabase.logger)
                        return refused
                    }
                }
                #expect(refused)
                // TRUNCATE fires no delete trigger: the attempts go too.
                _ = try await harness.sql("TRUNCATE webhook_events CASCADE")
                #expect(try await harness.int("SELECT count(*) FROM webhook_attempts") == 0)
            }
        }
    }
}
