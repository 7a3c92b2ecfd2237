import Foundation
import Logging
import PostgresNIO

/// What a person controls and sees about the use of their data: the access log and blocked companies.
package struct TransparencyService: Sendable {
    package let client: DatabasePool
    package let pseudonymizer: Pseudonymizer

    package init(client: DatabasePool, pseudonymizer: Pseudonymizer) {
        self.client = client
        self.pseudonymizer = pseudonymizer
    }

    package func accessLog(for principal: Principal, page: PageRequest, logger: Logger) async throws -> Page<AccessLogEntry> {
        guard principal.role == .user else { throw WrongRole("Only people have an access log.") }
        let (limit, after) = try page.readByTimeAndID()
        let rows = try await client.withConnection { connection in
            try await AccessLogStore.list(userID: principal.accountID, after: after, limit: limit, on: connection, logger: logger)
        }
        return Page(rows: rows, limit: limit) { PageKey(time: $0.at, id: $0.id) }
    }

    package func blocks(of principal: Principal, logger: Logger) async throws -> [Block] {
        guard principal.role == .user else { throw WrongRole("Only people block companies.") }
        return try await client.withConnection { connection in
            try await BlockStore.list(userID: principal.accountID, on: connection, logger: logger)
        }
    }

    /// Blocks the company (harmless when already blocked), refuses its pending requests to the person and
    /// ends its live subscriptions to them, all in one transaction. From then on the person is also left
    /// out of the company's group cohorts and group subscription releases (`GroupRequestStore`).
    package func block(_ thirdPartyID: UUID, by principal: Principal, requests: SingleRequestService, logger: Logger) async throws -> Block {
        guard principal.role == .user else { throw WrongRole("Only people block companies.") }
        return try await client.withTransaction(logger: logger) { connection in
            guard let block = try await BlockStore.block(userID: principal.accountID, thirdPartyID: thirdPartyID, on: connection, logger: logger)
            else { throw TransparencyError.companyNotFound }
            let refused = try await SingleRequestStore.refusePending(from: thirdPartyID, to: principal.accountID, on: connection, logger: logger)
            for request in refused {
                // Unseen by the sender, as every refusal: no webhook.
                try await requests.audit(
                    AuditAction.singleRequestRefused, request, actor: .user, details: ["reason": .string("blocked")],
                    on: connection, logger: logger)
            }
            let ended = try await requests.endSubscriptionsForBlock(of: thirdPartyID, by: principal.accountID, on: connection, logger: logger)
            let subject = try await pseudonymizer.pseudonym(for: principal.accountID, on: connection, logger: logger)
            try await AuditLog.append(
                AuditEvent(
                    actorID: subject, actorRole: Role.user.rawValue, action: AuditAction.thirdPartyBlocked, subject: subject,
                    details: [
                        "thirdParty": .string(thirdPartyID.uuidString.lowercased()), "refusedRequests": .int(refused.count),
                        "endedSubscriptions": .int(ended),
                    ]),
                on: connection, logger: logger)
            return block
        }
    }

    package func unblock(_ thirdPartyID: UUID, by principal: Principal, logger: Logger) async throws {
        guard principal.role == .user else { throw WrongRole("Only people block companies.") }
        let subject = try await pseudonymizer.pseudonym(for: principal.accountID, logger: logger)
        try await client.withTransaction(logger: logger) { connection in
            guard try await BlockStore.unblock(userID: principal.accountID, thirdPartyID: thirdPartyID, on: connection, logger: logger)
            else { throw TransparencyError.notBlocked }
            try await AuditLog.append(
                AuditEvent(
                    actorID: subject, actorRole: Role.user.rawValue, action: AuditAction.thirdPartyUnblocked, subject: subject,
                    details: ["thirdParty": .string(thirdPartyID.uuidString.lowercased())]),
                on: connection, logger: logger)
        }
    }
}
