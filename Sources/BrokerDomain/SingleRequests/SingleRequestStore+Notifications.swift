import Foundation
import Logging
import PostgresNIO

/// The SQL of the mails single requests cause outside their own transactions: a new request announced to
/// its person, and a subscription about to end. SKIP LOCKED, so instances never claim one twice.
extension SingleRequestStore {
    /// Claims up to `limit` requests not yet announced to a person, marking them announced. Those still
    /// pending with a person are returned; the rest (cancelled, lapsed, answered, or a request to nobody
    /// that lapsed) are only marked, so they leave the sweep's index.
    static func claimUnnotifiedRequests(limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [SingleRequest] {
        try await collect(
            connection.query(
                """
                WITH due AS (
                    SELECT id FROM single_requests
                    WHERE NOT person_notified AND (user_id IS NOT NULL OR status <> 'pending' OR expires_at <= now())
                    ORDER BY created_at
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), changed AS (
                    UPDATE single_requests r SET person_notified = true FROM due WHERE r.id = due.id RETURNING r.*
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                WHERE r.user_id IS NOT NULL AND r.status = 'pending' AND r.expires_at > now()
                """, logger: logger))
    }

    /// Claims up to `limit` live subscriptions that end within `days` and whose person has not been told.
    static func claimEndingSubscriptions(withinDays days: Int, limit: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> [SingleRequest]
    {
        try await collect(
            connection.query(
                """
                WITH due AS (
                    SELECT id FROM single_requests
                    WHERE status = 'accepted' AND ended_at IS NULL AND NOT ending_notified AND subscription_days > \(days)
                      AND ends_at > now() AND ends_at <= now() + make_interval(days => \(days)::int)
                    ORDER BY ends_at
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), changed AS (
                    UPDATE single_requests r SET ending_notified = true FROM due WHERE r.id = due.id RETURNING r.*
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                WHERE r.user_id IS NOT NULL
                """, logger: logger))
    }
}
