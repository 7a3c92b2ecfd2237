import Foundation
import Logging
import PostgresNIO

extension SingleRequestStore {
    /// Claims up to `limit` requests that lapsed while their sender was shown them as pending and whose lapse
    /// nobody announced: unanswered ones, ones that reached nobody, refusals the sender may not see (all
    /// read pending to the sender until `expires_at`). Marks them announced and, for unanswered ones, expired.
    /// SKIP LOCKED: several server instances never claim one lapse twice.
    static func claimUnannouncedLapses(limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [SingleRequest] {
        try await collect(
            connection.query(
                """
                WITH due AS (
                    SELECT id FROM single_requests
                    WHERE NOT lapse_announced AND expires_at <= now()
                      AND (status IN ('pending', 'expired') OR (status = 'refused' AND refusal_unseen AND withdrawn_at IS NULL))
                    ORDER BY expires_at
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), changed AS (
                    UPDATE single_requests r SET lapse_announced = true,
                        status = CASE WHEN r.status = 'pending' THEN 'expired' ELSE r.status END
                    FROM due WHERE r.id = due.id RETURNING r.*
                )
                \(unescaped: selection) FROM changed r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger))
    }
}
