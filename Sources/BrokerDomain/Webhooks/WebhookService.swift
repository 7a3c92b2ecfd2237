import Foundation
import Logging
import PostgresNIO

/// The rules of webhook registration: third parties only, a URL the policy allows, a secret of 16–256
/// characters. The secret is stored as given (it signs deliveries) and never logged or shown again.
package struct WebhookService: Sendable {
    let client: DatabasePool
    package let policy: WebhookURLPolicy

    package static let secretLength = 16...256

    package init(client: DatabasePool, policy: WebhookURLPolicy) {
        self.client = client
        self.policy = policy
    }

    package func register(_ principal: Principal, url: String, secret: String, logger: Logger) async throws
        -> WebhookStore.Webhook
    {
        guard principal.role == .thirdParty else { throw WrongRole() }
        var errors: [FieldError] = []
        if !Self.secretLength.contains(secret.count) {
            errors.append(FieldError(field: "secret", message: "must be \(Self.secretLength.lowerBound)–\(Self.secretLength.upperBound) characters"))
        }
        if case .failure(let rejection) = await policy.check(url) {
            errors.append(FieldError(field: "url", message: rejection.message))
        }
        guard errors.isEmpty else { throw WebhookError.invalid(errors) }
        let webhook = try await client.withTransaction(logger: logger) {
            try await WebhookStore.upsert(thirdPartyID: principal.accountID, url: url, secret: secret, on: $0, logger: logger)
        }
        logger.info("webhook registered", metadata: ["account.id": "\(principal.accountID)"])
        return webhook
    }

    package func webhook(of principal: Principal, logger: Logger) async throws -> WebhookStore.Webhook {
        guard principal.role == .thirdParty else { throw WrongRole() }
        guard
            let webhook = try await client.withConnection({
                try await WebhookStore.webhook(thirdPartyID: principal.accountID, on: $0, logger: logger)
            })
        else {
            throw WebhookError.notFound
        }
        return webhook
    }

    /// Removes the webhook; its undelivered events are marked failed.
    package func remove(_ principal: Principal, logger: Logger) async throws {
        guard principal.role == .thirdParty else { throw WrongRole() }
        let removed = try await client.withTransaction(logger: logger) {
            try await WebhookStore.delete(thirdPartyID: principal.accountID, on: $0, logger: logger)
        }
        guard removed else { throw WebhookError.notFound }
        logger.info("webhook removed", metadata: ["account.id": "\(principal.accountID)"])
    }

    package func deliveries(_ principal: Principal, page: PageRequest, logger: Logger) async throws
        -> Page<WebhookStore.Delivery>
    {
        guard principal.role == .thirdParty else { throw WrongRole() }
        let (limit, after) = try page.readByTimeAndID()
        return try await client.withConnection {
            try await WebhookStore.deliveries(thirdPartyID: principal.accountID, after: after, limit: limit, on: $0, logger: logger)
        }
    }
}
