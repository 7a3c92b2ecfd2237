import Crypto
import Foundation
import Logging
import PostgresNIO

/// The delivery side of the `webhook_events` outbox: claiming due events and recording attempts.
/// Every instance of the server runs the same queries; the database settles who delivers what.
enum WebhookDeliveryStore {
    /// An event leased for delivery, with the endpoint as registered at claim time.
    struct ClaimedEvent: Sendable {
        var id: UUID
        var thirdPartyID: UUID
        var type: String
        var createdAt: Date
        /// The event's `data` as the JSON text PostgreSQL stored.
        var data: String
        /// This attempt's number (1-based): `attempts` after the claim incremented it.
        var attempt: Int
        /// Nil when the webhook was removed between the event and its claim.
        var url: String?
        var secret: String?
    }

    /// Claims up to `limit` due events and leases them for `lease`. An event is due when it is pending,
    /// its time has come (including an expired lease of a crashed instance), and no earlier event of the
    /// same request is still pending (events of one request go out in order). At most `room[party]`
    /// events of each party are taken (`defaultRoom` for a party not in it), so one party's slow receiver
    /// cannot take every slot. `attempts` is incremented here, not after the post: an event in flight
    /// already counts as attempted, so the coalescing index (`attempts = 0`) admits a fresh
    /// `subscription.data_available` event behind it instead of folding news into one being sent.
    ///
    /// It runs in a transaction of its own with bitmap scans off: on statistics from before a burst (the table
    /// never analyzed yet, or analyzed while nothing was pending), the planner read every pending row through
    /// a bitmap, checked each for an earlier pending event and sorted them, rather than walk the due index in
    /// order under the `LIMIT`: 125 ms a claim at 50,000 pending instead of 5 ms (the webhook benchmark's
    /// backlog; autoanalyze had not run by its end).
    static func claim(
        limit: Int, defaultRoom: Int, room: [UUID: Int], lease: Duration, on connection: PostgresConnection, logger: Logger
    ) async throws -> [ClaimedEvent] {
        try await connection.withUnstrandedTransaction(logger: logger) { connection in
            try await claimInTransaction(limit: limit, defaultRoom: defaultRoom, room: room, lease: lease, on: connection, logger: logger)
        }
    }

    /// `claim` on the caller's transaction.
    static func claimInTransaction(
        limit: Int, defaultRoom: Int, room: [UUID: Int], lease: Duration, on connection: PostgresConnection, logger: Logger
    ) async throws -> [ClaimedEvent] {
        // Custom plans every time, as before the statement was prepared: the plan depends on its limits and on
        // how many events are pending, which a generic plan, made once per connection, would not follow.
        try await connection.query(
            "SELECT set_config('enable_bitmapscan', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)",
            logger: logger)
        // Keys and values of one dictionary come in the same order.
        let (parties, budgets) = (Array(room.keys), Array(room.values))
        let full = room.filter { $0.value <= 0 }.map(\.key)
        let rows = try await connection.preparedRows(
            Claim(
                full: full, candidates: Int64(limit * 4), parties: parties, budgets: budgets.map { Int32(clamping: $0) },
                defaultRoom: Int64(defaultRoom),
                limit: Int64(limit), lease: lease.inSeconds), logger: logger)
        var events: [ClaimedEvent] = []
        for (id, party, type, createdAt, data, attempt, url, secret, request, cursorArrival, cursorKey) in rows {
            var data = data
            if let cursorArrival, let request {
                if let cursorKey {
                    data = withCursor(data, arrival: cursorArrival, request: request, type: type, key: SymmetricKey(data: cursorKey))
                } else {
                    logger.error(
                        "download_cursor_key is missing: a subscription event goes out without its cursor", metadata: ["webhook.event.id": "\(id)"])
                }
            }
            events.append(
                ClaimedEvent(
                    id: id, thirdPartyID: party, type: type, createdAt: createdAt, data: data, attempt: Int(attempt),
                    url: url, secret: secret))
        }
        return events
    }

    /// `claimInTransaction`'s statement, prepared once per connection (a busy loop claims dozens of times a
    /// second): parsed once, planned at every claim (`plan_cache_mode`, set beside it).
    struct Claim: PostgresPreparedStatement {
        static let name = "d4h_webhook_claim"
        static let sql = """
            WITH candidates AS (
                -- The check for an earlier pending event stays inside the ordered scan, so that events
                -- waiting behind their request's first (a chain, or a run's events behind one backed off)
                -- are passed over rather than filling the candidates. With bitmap scans off (above), the scan
                -- is the due index in order and stops at the `LIMIT`.
                SELECT e.id, e.third_party_id, e.next_attempt_at FROM webhook_events e
                WHERE e.status = 'pending' AND e.next_attempt_at <= now()
                  AND e.third_party_id <> ALL($1::uuid[])
                  AND NOT EXISTS (
                      SELECT 1 FROM webhook_events earlier
                      WHERE earlier.third_party_id = e.third_party_id AND earlier.request_id = e.request_id
                        AND earlier.status = 'pending' AND earlier.seq < e.seq
                      -- Keeps this a probe of the index per candidate. As an anti join, with statistics
                      -- from before a burst of events (nothing pending), the planner scanned the whole
                      -- index for every candidate: 0.8 s a claim at 4,000 pending, until autoanalyze ran.
                      -- `webhook_events_pending_by_request` is the one partial index it can use: the due
                      -- index's predicate also names `next_attempt_at` (migration 0047), which this does not.
                      OFFSET 0)
                ORDER BY e.next_attempt_at
                LIMIT $2
            ), ranked AS (
                SELECT c.id, c.third_party_id, c.next_attempt_at,
                       row_number() OVER (PARTITION BY c.third_party_id ORDER BY c.next_attempt_at) AS n,
                       coalesce(room.budget, $5) AS budget
                FROM candidates c
                LEFT JOIN unnest($3::uuid[], $4::int[]) AS room (third_party_id, budget)
                  ON room.third_party_id = c.third_party_id
            ), due AS (
                -- By primary key: a join let the planner re-read every due row (and each dead version
                -- the backlog's claims and records left behind, until vacuum) on every claim. The status
                -- is tested in a form no partial index's predicate follows from, so that the primary key
                -- is the only index this step can use: with statistics from before a burst (nothing
                -- pending), every partial index looks empty and the planner took one to scan in full.
                SELECT e.id, e.third_party_id FROM webhook_events e
                WHERE e.id = ANY(ARRAY(SELECT r.id FROM ranked r WHERE r.n <= r.budget))
                  AND NOT (e.status IS DISTINCT FROM 'pending') AND e.next_attempt_at <= now()
                ORDER BY e.next_attempt_at
                LIMIT $6
                FOR UPDATE OF e SKIP LOCKED
            )
            UPDATE webhook_events e
            SET attempts = e.attempts + 1, next_attempt_at = now() + make_interval(secs => $7)
            FROM due LEFT JOIN webhooks w ON w.third_party_id = due.third_party_id
            WHERE e.id = due.id
            RETURNING e.id, e.third_party_id, e.type, e.created_at, e.data::text, e.attempts, w.url, w.secret, e.request_id,
                      e.cursor_arrival, CASE WHEN e.cursor_arrival IS NOT NULL THEN (
                          SELECT value FROM server_secrets WHERE name = 'download_cursor_key') END
            """
        typealias Row = (UUID, UUID, String, Date, String, Int32, String?, String?, UUID?, Int64?, Data?)
        var full: [UUID]
        var candidates: Int64
        var parties: [UUID]
        var budgets: [Int32]
        var defaultRoom: Int64
        var limit: Int64
        var lease: Double

        func makeBindings() throws -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(full)
            binds.append(candidates)
            binds.append(parties)
            binds.append(budgets)
            binds.append(defaultRoom)
            binds.append(limit)
            binds.append(lease)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A subscription event's `data` as delivered: the stored object (`{"requestId": …}`) with `cursor`, the
    /// arrival number the upload's statement stored in `cursor_arrival` sealed for the request (migration 0049).
    /// Sealing here rather than when the event is queued lets an upload queue it inside its one statement, with
    /// no key at hand. Positions' events get a positions cursor.
    /// Any other type is left as stored: only these two carry a cursor. (Without the key, which migration
    /// 0011 stores, the claim delivers the stored object as it is rather than lease a batch it cannot send.)
    static func withCursor(_ data: String, arrival: Int64, request: UUID, type: String, key: SymmetricKey) -> String {
        let kind: DownloadCursor.Kind
        switch WebhookOutboxStore.EventType(rawValue: type) {
        case .subscriptionDataAvailable: kind = .samples
        case .subscriptionPositionsAvailable: kind = .positions
        default: return data
        }
        let cursor = #""cursor": "\#(DownloadCursor.seal(arrival, request: request, kind: kind, key: key))""#
        // `data` is a JSON object's text as PostgreSQL prints it; the sealed cursor is URL-safe base64, no escaping needed.
        let rest = data.drop(while: { $0 == "{" || $0 == " " })
        return rest.hasPrefix("}") ? "{\(cursor)}" : "{\(cursor), \(rest)"
    }

    /// What one attempt came to.
    struct Outcome: Sendable {
        var delivered: Bool
        var statusCode: Int?
        var error: String?
        var durationMs: Int
    }

    /// One finished attempt, waiting to be recorded.
    struct Finished: Sendable {
        var event: ClaimedEvent
        var outcome: Outcome
        /// The delay before the next attempt, should this one have failed.
        var retryDelay: Duration
    }

    /// Records a batch of attempts and settles their events, in one statement (one transaction and one
    /// commit for the batch, instead of one per event): each event delivered, or retried after its
    /// `retryDelay`, or failed when that retry would fall after `horizon` from the event's creation. An
    /// event is only changed while this instance still holds it (same attempt number, still pending): if
    /// its lease ran out and another instance claimed it, or the webhook was removed, that newer state wins.
    /// An event erased meanwhile (its company's account deleted) is skipped, so it cannot fail the batch.
    static func record(_ batch: [Finished], horizon: Duration, on connection: PostgresConnection, logger: Logger) async throws {
        guard !batch.isEmpty else { return }
        // Arrays cannot carry NULLs here: 0 stands for "no status code" and "" for "no error".
        let ids = batch.map(\.event.id)
        let attempts = batch.map { Int32($0.event.attempt) }
        let delivered = batch.map(\.outcome.delivered)
        let statusCodes = batch.map { Int32(clamping: $0.outcome.statusCode ?? 0) }
        let errors = batch.map { $0.outcome.error.map { String($0.prefix(500)) } ?? "" }
        let durations = batch.map { Int32(clamping: $0.outcome.durationMs) }
        let retryDelays = batch.map(\.retryDelay.inSeconds)
        _ = try await connection.preparedRows(
            Record(
                ids: ids, attempts: attempts, delivered: delivered, statusCodes: statusCodes, errors: errors, durations: durations,
                retryDelays: retryDelays, horizon: horizon.inSeconds), logger: logger)
    }

    /// `record`'s statement, prepared once per connection: a backlog is recorded a few dozen outcomes at a time,
    /// and parsing and planning the statement each time was a quarter of its cost (`log_min_duration_statement`
    /// over the webhook benchmark: 0.53 ms of 2.06 per record).
    struct Record: PostgresPreparedStatement {
        static let name = "d4h_webhook_record"
        static let sql = """
            WITH outcome AS (
                SELECT * FROM unnest($1::uuid[], $2::int[], $3::bool[], $4::int[], $5::text[],
                                     $6::int[], $7::float8[])
                    AS o (event_id, attempt, delivered, status_code, error, duration_ms, retry_delay)
            ), settled AS (
                -- The status in a form no partial index follows from: only the primary key can find the rows,
                -- whatever the statistics say (see `claim`). An event erased meanwhile is not found, and one
                -- being erased is waited for, then left out.
                UPDATE webhook_events e SET
                    status = CASE
                        WHEN o.delivered THEN 'delivered'
                        WHEN now() + make_interval(secs => o.retry_delay)
                             > e.created_at + make_interval(secs => $8) THEN 'failed'
                        ELSE 'pending' END,
                    delivered_at = CASE WHEN o.delivered THEN now() END,
                    next_attempt_at = CASE WHEN o.delivered THEN e.next_attempt_at
                        ELSE now() + make_interval(secs => o.retry_delay) END
                FROM outcome o
                WHERE e.id = o.event_id AND NOT (e.status IS DISTINCT FROM 'pending') AND e.attempts = o.attempt
                RETURNING e.id
            ), others AS (
                -- Events another instance took over after this one's lease ran out: their attempt is still
                -- written, once they are locked against an erasure (which then waits, and takes the attempt
                -- with it). The settled ones are locked by their update already.
                SELECT e.id FROM webhook_events e
                WHERE e.id IN (SELECT event_id FROM outcome) AND e.id NOT IN (SELECT id FROM settled)
                FOR KEY SHARE
            )
            -- No foreign key checks an attempt against its event (migration 0054): every event here is locked
            -- by this transaction, so it cannot go before the attempt is written, and a delete that waited for
            -- the lock takes the attempt with it (its trigger refuses to run but at READ COMMITTED, where it
            -- sees what this transaction committed).
            INSERT INTO webhook_attempts (event_id, attempt, status_code, error, duration_ms)
            SELECT o.event_id, o.attempt, nullif(o.status_code, 0), nullif(o.error, ''), o.duration_ms
            FROM outcome o
            WHERE o.event_id IN (SELECT id FROM settled UNION ALL SELECT id FROM others)
            ON CONFLICT (event_id, attempt) DO NOTHING
            """
        typealias Row = Int32
        var ids: [UUID]
        var attempts: [Int32]
        var delivered: [Bool]
        var statusCodes: [Int32]
        var errors: [String]
        var durations: [Int32]
        var retryDelays: [Double]
        var horizon: Double

        func makeBindings() throws -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(ids)
            binds.append(attempts)
            binds.append(delivered)
            binds.append(statusCodes)
            binds.append(errors)
            binds.append(durations)
            binds.append(retryDelays)
            binds.append(horizon)
            return binds
        }

        /// Never called: the statement answers no rows.
        func decodeRow(_ row: PostgresRow) throws -> Row { 0 }
    }

    /// The latest time at which a pending event of any party became due (nil when none is): an idle loop's
    /// look between its claims. One step back along the due index from now, in no transaction of its own, where
    /// a claim plans and runs its statement in one.
    static func latestDue(on connection: PostgresConnection, logger: Logger) async throws -> Date? {
        try await connection.query(
            "SELECT next_attempt_at FROM webhook_events WHERE status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at DESC LIMIT 1",
            logger: logger
        ).collect().first?.decode(Date.self)
    }

    /// Gives claimed events back unposted (a stopping instance's queue, or a fast receiver's extra share once it
    /// slows): due again at once, for any instance, instead of when their lease would have run out. The claim's
    /// count of the attempt is taken back, but never below 1: the coalescing index admits a fresh event beside
    /// one with `attempts > 0`, and going back to 0 could collide with that event. So an event given back any
    /// number of times is at most one attempt ahead, in its retry backoff, of the posts it really had.
    static func release(_ events: [ClaimedEvent], on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        _ = try await connection.query(
            """
            UPDATE webhook_events e SET next_attempt_at = now(), attempts = greatest(e.attempts - 1, 1)
            FROM unnest(\(events.map(\.id))::uuid[], \(events.map { Int32($0.attempt) })::int[]) AS r (id, attempt)
            WHERE e.id = r.id AND e.status = 'pending' AND e.attempts = r.attempt
            """, logger: logger
        ).collect()
    }
}
