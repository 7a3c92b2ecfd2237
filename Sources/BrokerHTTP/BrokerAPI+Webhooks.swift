import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func putWebhook(_ input: Operations.PutWebhook.Input) async throws -> Operations.PutWebhook.Output {
        let principal = try await caller(.thirdParty)
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let webhook = try await webhooks.register(principal, url: body.url, secret: body.secret, logger: logger)
        return .ok(.init(body: .json(.init(webhook))))
    }

    func getWebhook(_ input: Operations.GetWebhook.Input) async throws -> Operations.GetWebhook.Output {
        let webhook = try await webhooks.webhook(of: try await caller(.thirdParty), logger: logger)
        return .ok(.init(body: .json(.init(webhook))))
    }

    func deleteWebhook(_ input: Operations.DeleteWebhook.Input) async throws -> Operations.DeleteWebhook.Output {
        try await webhooks.remove(try await caller(.thirdParty), logger: logger)
        return .noContent(.init())
    }

    func listWebhookDeliveries(_ input: Operations.ListWebhookDeliveries.Input) async throws
        -> Operations.ListWebhookDeliveries.Output
    {
        let principal = try await caller(.thirdParty)
        let (limit, cursor) = try page(limit: input.query.limit, cursor: input.query.cursor)
        let page = try await webhooks.deliveries(principal, cursor: cursor, limit: limit, logger: logger)
        return .ok(.init(body: .json(.init(items: page.rows.map(Components.Schemas.WebhookDelivery.init), nextCursor: page.nextCursor))))
    }
}

extension Components.Schemas.Webhook {
    init(_ webhook: WebhookStore.Webhook) {
        self.init(url: webhook.url, createdAt: webhook.createdAt, updatedAt: webhook.updatedAt)
    }
}

extension Components.Schemas.WebhookDelivery {
    init(_ delivery: WebhookStore.Delivery) {
        self.init(
            id: delivery.id.uuidString.lowercased(),
            // Types are written by this server; an unknown one would be a bug, not the caller's problem.
            _type: .init(rawValue: delivery.type) ?? .singleRequest_accepted,
            requestId: delivery.requestID?.uuidString.lowercased(),
            createdAt: delivery.createdAt,
            status: .init(rawValue: delivery.status) ?? .pending,
            deliveredAt: delivery.deliveredAt,
            nextAttemptAt: delivery.nextAttemptAt,
            attempts: delivery.attempts.map {
                .init(attempt: $0.attempt, at: $0.at, statusCode: $0.statusCode, error: $0.error, durationMs: $0.durationMs)
            })
    }
}
