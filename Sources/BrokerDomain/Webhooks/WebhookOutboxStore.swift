import Foundation
import Logging
import PostgresNIO

/// Queues webhook events on the caller's transaction, so an event exists exactly when the change it
/// announces committed. The delivery loop sends them.
package enum WebhookOutboxStore {
    package enum EventType: String, Sendable {
        case singleRequestAccepted = "single_request.accepted"
        /// A request the sender was shown as pending lapsed (sent alike whatever the person did or was).
        case singleRequestExpired = "single_request.expired"
        // No `single_request.refused`: a sender may not learn of a refusal (`SingleRequest.seenBySender`).
        case subscriptionDataAvailable = "subscription.data_available"
        /// New positions for a subscription that asked for `position`; its cursor is for the positions' download.
        case subscriptionPositionsAvailable = "subscription.positions_available"
        case subscriptionEnded = "subscription.ended"
        case groupRequestResultsUpdated = "group_request.results_updated"
        // Track4Run, to the organiser; the event's request id is the run's. Runners appear by bib only.
        case runRunnerJoined = "run.runner_joined"
        case runRunnerLeft = "run.runner_left"
        case runRunnerRemoved = "run.runner_removed"
        case runRunnerFinished = "run.runner_finished"
    }

    /// Queues one event for the third party's webhook (nothing when it has none).
    package static func enqueue(
        _ type: EventType, to thirdPartyID: UUID, requestID: UUID, data: [String: String],
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        var payload = data
        payload["requestId"] = requestID.uuidString.lowercased()
        try await enqueue(type, to: thirdPartyID, requestID: requestID, payload: payload, on: connection, logger: logger)
    }

    /// Queues one event whose data has structure (a grant's types and window); `payload` is the event's
    /// `data` object as it will be delivered, `requestId` included.
    static func enqueue(
        _ type: EventType, to thirdPartyID: UUID, requestID: UUID, payload: some Encodable,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.rfc3339(date))
        }
        let json = String(decoding: try encoder.encode(payload), as: UTF8.self)
        try await connection.query(
            "SELECT enqueue_webhook_event(\(thirdPartyID), \(type.rawValue), \(requestID), \(json)::jsonb)",
            logger: logger)
    }
}
