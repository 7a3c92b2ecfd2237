import Foundation
import Logging
import PostgresNIO

extension SingleRequestService {
    /// A person's erasure, on its transaction and before the account row goes: pending requests are refused,
    /// live subscriptions end by the user, each with its audit event and the sender's webhook.
    func releaseForErasure(userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        let (refused, ended) = try await SingleRequestStore.releaseForErasure(userID: userID, on: connection, logger: logger)
        for request in refused {
            try await audit(AuditAction.singleRequestRefused, request, actor: .user, details: ["reason": .string("erased")],
                            on: connection, logger: logger)
            try await WebhookOutbox.enqueue(.singleRequestRefused, to: request.thirdParty.id, requestID: request.id, data: [:],
                                            on: connection, logger: logger)
        }
        for request in ended {
            try await announceEnd(request, by: .user, reason: "revoked", on: connection, logger: logger)
        }
    }

    /// Queues the `subscription.ended` (expired) webhook of subscriptions whose `endsAt` has passed, a batch
    /// at a time. Expiry itself needs no job (it is computed from time); this only announces it. Rows are
    /// claimed with SKIP LOCKED, so several server instances never announce one expiry twice.
    @discardableResult
    public func announceExpiries(limit: Int = 500, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                WITH due AS (
                    SELECT id FROM single_requests
                    WHERE status = 'accepted' AND ended_at IS NULL AND NOT expiry_announced AND ends_at <= now()
                    ORDER BY ends_at
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), changed AS (
                    UPDATE single_requests r SET expiry_announced = true FROM due WHERE r.id = due.id RETURNING r.*
                )
                \(unescaped: SingleRequestStore.selection) FROM changed r JOIN third_parties t ON t.account_id = r.third_party_id
                """, logger: logger)
            let expired = try await SingleRequestStore.collect(rows)
            for request in expired {
                try await audit(AuditAction.subscriptionExpired, request, actor: .thirdParty, on: connection, logger: logger)
                try await WebhookOutbox.enqueue(
                    .subscriptionEnded, to: request.thirdParty.id, requestID: request.id,
                    data: ["endedBy": "third_party", "reason": "expired"], on: connection, logger: logger)
            }
            return expired.count
        }
    }
}
