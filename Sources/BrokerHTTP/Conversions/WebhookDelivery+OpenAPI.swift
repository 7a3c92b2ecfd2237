import BrokerOpenAPI

// A delivery's type and status are stored as text (`webhook_events`) and written only by this server: one
// the contract does not name is our bug, answered as a logged 500 rather than shown as another event.

extension Components.Schemas.WebhookDelivery._TypePayload {
    init(stored text: String) throws {
        guard let type = Self(rawValue: text) else { throw StoredValueMismatch(column: "webhook_events.type", value: text) }
        self = type
    }
}

extension Components.Schemas.WebhookDelivery.StatusPayload {
    init(stored text: String) throws {
        guard let status = Self(rawValue: text) else { throw StoredValueMismatch(column: "webhook_events.status", value: text) }
        self = status
    }
}
