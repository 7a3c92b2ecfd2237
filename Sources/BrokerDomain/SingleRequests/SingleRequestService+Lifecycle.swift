import Foundation
import Logging
import PostgresNIO

extension SingleRequestService {
    /// A person's erasure, on its transaction and before the account row goes: pending requests are refused
    /// (unseen by their senders, as every refusal), live subscriptions end by the user, each with its audit
    /// event, and the ended ones with the sender's webhook.
    func releaseForErasure(userID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        let (refused, ended) = try await SingleRequestStore.releaseForErasure(userID: userID, on: connection, logger: logger)
        for request in refused {
            try await audit(
                AuditAction.singleRequestRefused, request, actor: .user, details: ["reason": .string("erased")],
                on: connection, logger: logger)
        }
        for request in ended {
            try await announceEnd(request, by: .user, reason: "revoked", on: connection, logger: logger)
        }
    }

    /// A company's erasure, on its transaction and before its account goes: its pending requests are
    /// cancelled and its live subscriptions end, each with its audit event (no webhook: its endpoint goes
    /// with it). The requests stay, with the company shown as erased, in the people's inboxes and exports.
    func releaseForCompanyErasure(thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        let (cancelled, ended) = try await SingleRequestStore.releaseForCompanyErasure(thirdPartyID: thirdPartyID, on: connection, logger: logger)
        for request in cancelled {
            try await audit(
                AuditAction.singleRequestCancelled, request, actor: .thirdParty, details: ["reason": .string("erased")],
                on: connection, logger: logger)
        }
        for request in ended {
            try await audit(
                AuditAction.subscriptionEnded, request, actor: .thirdParty,
                details: ["endedBy": .string(SingleRequest.Subscription.Party.thirdParty.rawValue), "reason": .string("erased")],
                on: connection, logger: logger)
        }
    }

    /// A block, on its transaction: the blocked company's live subscriptions to the person end at once, by
    /// the user. The sender's webhook says "revoked", as when the person ends one: a block is not disclosed
    /// to the company (requests it sends afterwards are answered as usual and reach nobody). The audit
    /// event, for auditors only, says "blocked".
    func endSubscriptionsForBlock(of thirdPartyID: UUID, by userID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> Int
    {
        let ended = try await SingleRequestStore.endSubscriptions(from: thirdPartyID, to: userID, on: connection, logger: logger)
        for request in ended {
            try await announceEnd(request, by: .user, reason: "revoked", auditReason: "blocked", on: connection, logger: logger)
        }
        return ended.count
    }

    /// Queues the `subscription.ended` (expired) webhook of subscriptions whose `endsAt` has passed, a batch
    /// at a time. Expiry itself needs no job (it is computed from time); this only announces it.
    @discardableResult
    package func announceExpiries(limit: Int = 500, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            let expired = try await SingleRequestStore.claimUnannouncedExpiries(limit: limit, on: connection, logger: logger)
            for request in expired {
                try await audit(AuditAction.subscriptionExpired, request, actor: .thirdParty, on: connection, logger: logger)
                var data = ["endedBy": "third_party", "reason": "expired"]
                data["receipt"] = try await receipts.issue(.expired, for: request, on: connection, logger: logger)?.jws
                try await WebhookOutboxStore.enqueue(
                    .subscriptionEnded, to: request.thirdParty.id, requestID: request.id, data: data, on: connection, logger: logger)
            }
            return expired.count
        }
    }
}
