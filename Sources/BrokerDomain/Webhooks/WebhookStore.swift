import Foundation
import Logging
import PostgresNIO

/// Third parties' webhook endpoints and the history of their events, as the owner sees them.
package enum WebhookStore {
    /// A registered endpoint; the secret is never read back out.
    package struct Webhook: Sendable, Equatable {
        package var url: String
        package var createdAt: Date
        package var updatedAt: Date
    }

    /// One event with every delivery attempt made for it, oldest attempt first.
    package struct Delivery: Sendable {
        package var id: UUID
        package var type: String
        package var requestID: UUID?
        package var createdAt: Date
        package var status: String
        package var deliveredAt: Date?
        package var nextAttemptAt: Date?
        package var attempts: [Attempt]
    }

    package struct Attempt: Sendable, Equatable {
        package var attempt: Int
        package var at: Date
        package var statusCode: Int?
        package var error: String?
        package var durationMs: Int
    }

    /// Registers or replaces the endpoint; pending events go to the new URL, signed with the new secret.
    package static func upsert(thirdPartyID: UUID, url: String, secret: String, on connection: PostgresConnection, logger: Logger) async throws
        -> Webhook
    {
        let rows = try await connection.query(
            """
            INSERT INTO webhooks (third_party_id, url, secret) VALUES (\(thirdPartyID), \(url), \(secret))
            ON CONFLICT (third_party_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, updated_at = now()
            RETURNING url, created_at, updated_at
            """, logger: logger)
        guard let (url, createdAt, updatedAt) = try await rows.collect().first?.decode((String, Date, Date).self) else {
            throw WebhookStoreError.noRow
        }
        return Webhook(url: url, createdAt: createdAt, updatedAt: updatedAt)
    }

    package static func webhook(thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Webhook? {
        let rows = try await connection.query(
            "SELECT url, created_at, updated_at FROM webhooks WHERE third_party_id = \(thirdPartyID)", logger: logger)
        return try await rows.collect().first.map { row in
            let (url, createdAt, updatedAt) = try row.decode((String, Date, Date).self)
            return Webhook(url: url, createdAt: createdAt, updatedAt: updatedAt)
        }
    }

    /// Removes the endpoint and marks its undelivered events failed, in one statement; false when there
    /// was none.
    package static func delete(thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            WITH removed AS (
                DELETE FROM webhooks WHERE third_party_id = \(thirdPartyID) RETURNING third_party_id
            ), dropped AS (
                UPDATE webhook_events SET status = 'failed'
                WHERE third_party_id IN (SELECT third_party_id FROM removed) AND status = 'pending'
            )
            SELECT count(*) FROM removed
            """, logger: logger)
        return try await rows.collect().first?.decode(Int64.self) == 1
    }

    /// One page of the third party's events, newest first, after `cursor`, each with its attempts.
    static func deliveries(thirdPartyID: UUID, after cursor: PageKey?, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws
        -> Page<Delivery>
    {
        // Exact microsecond text, not a Date bind (which truncates and would shift the keyset boundary).
        let cursorTime = cursor.map { Timestamp.postgresText($0.time) }
        let cursorID = cursor?.id ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let rows = try await connection.query(
            """
            SELECT id, type, request_id, created_at, status, delivered_at,
                   CASE WHEN status = 'pending' THEN next_attempt_at END
            FROM webhook_events
            WHERE third_party_id = \(thirdPartyID)
              AND (\(cursorTime)::timestamptz IS NULL OR (created_at, id) < (\(cursorTime)::timestamptz, \(cursorID)))
            ORDER BY created_at DESC, id DESC
            LIMIT \(limit + 1)
            """, logger: logger)
        var deliveries: [Delivery] = []
        for try await (id, type, requestID, createdAt, status, deliveredAt, nextAttemptAt)
            in rows.decode((UUID, String, UUID?, Date, String, Date?, Date?).self)
        {
            deliveries.append(
                Delivery(
                    id: id, type: type, requestID: requestID, createdAt: createdAt, status: status,
                    deliveredAt: deliveredAt, nextAttemptAt: nextAttemptAt, attempts: []))
        }
        var page = Page(rows: deliveries, limit: limit) { PageKey(time: $0.createdAt, id: $0.id) }
        let attempts = try await attempts(of: page.items.map(\.id), on: connection, logger: logger)
        for index in page.items.indices { page.items[index].attempts = attempts[page.items[index].id] ?? [] }
        return page
    }

    private static func attempts(of eventIDs: [UUID], on connection: PostgresConnection, logger: Logger) async throws -> [UUID: [Attempt]] {
        guard !eventIDs.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT event_id, attempt, at, status_code, error, duration_ms FROM webhook_attempts
            WHERE event_id = ANY(\(eventIDs)) ORDER BY event_id, attempt
            """, logger: logger)
        var attempts: [UUID: [Attempt]] = [:]
        for try await (eventID, attempt, at, statusCode, error, duration) in rows.decode((UUID, Int32, Date, Int32?, String?, Int32).self) {
            attempts[eventID, default: []].append(
                Attempt(
                    attempt: Int(attempt), at: at, statusCode: statusCode.map(Int.init), error: error, durationMs: Int(duration)))
        }
        return attempts
    }
}
