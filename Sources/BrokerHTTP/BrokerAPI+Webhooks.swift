import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func putWebhook(_ input: Operations.PutWebhook.Input) async throws -> Operations.PutWebhook.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let webhook = try await services.webhooks.register(principal, url: body.url, secret: body.secret, logger: logger)
        return .ok(.init(body: .json(.init(webhook))))
    }

    func getWebhook(_ input: Operations.GetWebhook.Input) async throws -> Operations.GetWebhook.Output {
        let webhook = try await services.webhooks.webhook(of: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(webhook))))
    }

    func deleteWebhook(_ input: Operations.DeleteWebhook.Input) async throws -> Operations.DeleteWebhook.Output {
        try await services.webhooks.remove(try await caller(), logger: logger)
        return .noContent(.init())
    }

    func listWebhookDeliveries(_ input: Operations.ListWebhookDeliveries.Input) async throws
        -> Operations.ListWebhookDeliveries.Output
    {
        let principal = try await caller()
        let page = try await services.webhooks.deliveries(
            principal, page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), logger: logger)
        return .ok(.init(body: .json(.init(items: try page.items.map(Components.Schemas.WebhookDelivery.init), nextCursor: page.next?.text))))
    }
}

extension Components.Schemas.Webhook {
    init(_ webhook: WebhookStore.Webhook) {
        self.init(url: webhook.url, createdAt: webhook.createdAt, updatedAt: webhook.updatedAt)
    }
}

extension Components.Schemas.WebhookDelivery {
    init(_ delivery: WebhookStore.Delivery) throws {
        self.init(
            id: delivery.id.uuidString.lowercased(),
            // Written by this server: one the contract does not name is our bug, a logged 500.
            _type: try .init(stored: delivery.type),
            requestId: delivery.requestID?.uuidString.lowercased(),
            createdAt: delivery.createdAt,
            status: try .init(stored: delivery.status),
            deliveredAt: delivery.deliveredAt,
            nextAttemptAt: delivery.nextAttemptAt,
            attempts: delivery.attempts.map {
                .init(attempt: $0.attempt, at: $0.at, statusCode: $0.statusCode, error: $0.error, durationMs: $0.durationMs)
            })
    }
}
