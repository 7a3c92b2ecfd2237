import Crypto
import Foundation
import PostgresNIO

@testable import BrokerDomain

extension TestHarness {
    /// A queued webhook event's type and the `data` a delivery would send: a subscription event's cursor is
    /// sealed from its `cursor_arrival` when it is claimed (migration 0049), so reading `data` alone would
    /// miss it. The same sealing as the delivery (`WebhookDeliveryStore.withCursor`).
    struct QueuedEvent {
        var type: String
        var data: [String: Any]
        var cursor: String? { data["cursor"] as? String }
    }

    /// The events `condition` (SQL over `webhook_events`) selects, in queue order.
    func queuedEvents(where condition: String) async throws -> [QueuedEvent] {
        let rows = try await sql(
            """
            SELECT type, data::text, request_id, cursor_arrival, (SELECT value FROM server_secrets WHERE name = 'download_cursor_key')
            FROM webhook_events WHERE \(condition) ORDER BY seq
            """)
        return try rows.map { row in
            let (type, stored, request, arrival, key) = try row.decode((String, String, UUID?, Int64?, Data?).self)
            var text = stored
            if let arrival, let request, let key {
                text = WebhookDeliveryStore.withCursor(stored, arrival: arrival, request: request, type: type, key: SymmetricKey(data: key))
            }
            let data = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
            return QueuedEvent(type: type, data: data)
        }
    }
}
