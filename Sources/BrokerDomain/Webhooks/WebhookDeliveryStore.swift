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
    /// same request is still pending (events of one request go out in order). At most
    /// `perThirdParty - inFlight[party]` events of each party are taken, so one party's slow receiver
    /// cannot take every slot. `attempts` is incremented here, not after the post: an event in flight
    /// already counts as attempted, so the coalescing index (`attempts = 0`) admits a fresh
    /// `subscription.data_available` event behind it instead of folding news into one being sent.
    static func claim(
        limit: Int, perThirdParty: Int, inFlight: [UUID: Int], lease: Duration, on connection: PostgresConnection, logger: Logger
    ) async throws -> [ClaimedEvent] {
        let parties = Array(inFlight.keys)
        let counts = parties.map { inFlight[$0] ?? 0 }
        let full = parties.filter { (inFlight[$0] ?? 0) >= perThirdParty }
        let rows = try await connection.query(
            """
            WITH candidates AS (
                SELECT e.id, e.third_party_id, e.next_attempt_at FROM webhook_events e
                WHERE e.status = 'pending' AND e.next_attempt_at <= now()
                  AND e.third_party_id <> ALL(\(full)::uuid[])
                  AND NOT EXISTS (
                      SELECT 1 FROM webhook_events earlier
                      WHERE earlier.third_party_id = e.third_party_id AND earlier.request_id = e.request_id
                        AND earlier.status = 'pending' AND earlier.seq < e.seq)
                ORDER BY e.next_attempt_at
                LIMIT \(limit * 4)
            ), ranked AS (
                SELECT c.id, c.third_party_id, c.next_attempt_at,
                       row_number() OVER (PARTITION BY c.third_party_id ORDER BY c.next_attempt_at) AS n,
                       \(perThirdParty) - coalesce(busy.in_flight, 0) AS budget
                FROM candidates c
                LEFT JOIN unnest(\(parties)::uuid[], \(counts)::int[]) AS busy (third_party_id, in_flight)
                  ON busy.third_party_id = c.third_party_id
            ), due AS (
                SELECT e.id, e.third_party_id FROM webhook_events e JOIN ranked r ON r.id = e.id
                WHERE r.n <= r.budget AND e.status = 'pending' AND e.next_attempt_at <= now()
                ORDER BY r.next_attempt_at
                LIMIT \(limit)
                FOR UPDATE OF e SKIP LOCKED
            )
            UPDATE webhook_events e
            SET attempts = e.attempts + 1, next_attempt_at = now() + make_interval(secs => \(lease.inSeconds))
            FROM due LEFT JOIN webhooks w ON w.third_party_id = due.third_party_id
            WHERE e.id = due.id
            RETURNING e.id, e.third_party_id, e.type, e.created_at, e.data::text, e.attempts, w.url, w.secret
            """, logger: logger)
        var events: [ClaimedEvent] = []
        for try await (id, party, type, createdAt, data, attempt, url, secret)
            in rows.decode((UUID, UUID, String, Date, String, Int32, String?, String?).self)
        {
            events.append(
                ClaimedEvent(
                    id: id, thirdPartyID: party, type: type, createdAt: createdAt, data: data, attempt: Int(attempt),
                    url: url, secret: secret))
        }
        return events
    }

    /// What one attempt came to.
    struct Outcome: Sendable {
        var delivered: Bool
        var statusCode: Int?
        var error: String?
        var durationMs: Int
    }

    /// Records the attempt and settles the event: delivered, or retried after `retryDelay`, or failed
    /// when that retry would fall after `horizon` from the event's creation. The event is only changed
    /// while this instance still holds it (same attempt number, still pending): if the lease ran out and
    /// another instance claimed it, or the webhook was removed, that newer state wins.
    static func record(
        _ event: ClaimedEvent, outcome: Outcome, retryDelay: Duration, horizon: Duration, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let error = outcome.error.map { String($0.prefix(500)) }
        let statusCode = outcome.statusCode.map(Int32.init)
        _ = try await connection.query(
            """
            WITH attempt AS (
                INSERT INTO webhook_attempts (event_id, attempt, status_code, error, duration_ms)
                VALUES (\(event.id), \(Int32(event.attempt)), \(statusCode), \(error), \(Int32(clamping: outcome.durationMs)))
                ON CONFLICT (event_id, attempt) DO NOTHING
            )
            UPDATE webhook_events SET
                status = CASE
                    WHEN \(outcome.delivered) THEN 'delivered'
                    WHEN now() + make_interval(secs => \(retryDelay.inSeconds))
                         > created_at + make_interval(secs => \(horizon.inSeconds)) THEN 'failed'
                    ELSE 'pending' END,
                delivered_at = CASE WHEN \(outcome.delivered) THEN now() END,
                next_attempt_at = CASE WHEN \(outcome.delivered) THEN next_attempt_at
                    ELSE now() + make_interval(secs => \(retryDelay.inSeconds)) END
            WHERE id = \(event.id) AND status = 'pending' AND attempts = \(Int32(event.attempt))
            """, logger: logger
        ).collect()
    }
}
