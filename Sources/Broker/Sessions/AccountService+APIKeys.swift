import Foundation
import Logging
import PostgresNIO

/// Third parties' long-lived API keys.
extension AccountService {
    public func createAPIKey(_ principal: Principal, name: String?, logger: Logger) async throws -> (APIKeyStore.Key, SecretToken) {
        guard principal.role == .thirdParty else { throw AccountError.wrongRole }
        var errors: [FieldError] = []
        let name = validText(name ?? "API key", field: "name", maxLength: 100, into: &errors)
        guard errors.isEmpty, let name else { throw AccountError.invalid(errors) }
        let secret = SecretToken.generate(.apiKey)
        let key = try await client.withTransaction(logger: logger) { connection in
            let key = try await APIKeyStore.create(accountID: principal.accountID, name: name, secret: secret, on: connection, logger: logger)
            try await AuditLog.append(
                AuditEvent(actorID: principal.accountID.uuidString.lowercased(), actorRole: principal.role.rawValue,
                           action: AuditAction.apiKeyCreated, details: ["keyId": .string(key.id.uuidString.lowercased())]),
                on: connection, logger: logger)
            return key
        }
        return (key, secret)
    }

    public func listAPIKeys(_ principal: Principal, cursor: PageCursor?, limit: Int, logger: Logger) async throws
        -> Page<APIKeyStore.Key>
    {
        guard principal.role == .thirdParty else { throw AccountError.wrongRole }
        return try await apiKeys.list(accountID: principal.accountID, after: cursor, limit: limit, logger: logger)
    }

    public func revokeAPIKey(_ principal: Principal, id: UUID, logger: Logger) async throws {
        guard principal.role == .thirdParty else { throw AccountError.wrongRole }
        do {
            try await client.withTransaction(logger: logger) { connection in
                guard try await APIKeyStore.revoke(id: id, accountID: principal.accountID, on: connection, logger: logger) else {
                    throw AccountError.apiKeyNotFound
                }
                try await AuditLog.append(
                    AuditEvent(actorID: principal.accountID.uuidString.lowercased(), actorRole: principal.role.rawValue,
                               action: AuditAction.apiKeyRevoked, details: ["keyId": .string(id.uuidString.lowercased())]),
                    on: connection, logger: logger)
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
    }
}
