import Foundation
import Logging
import PostgresNIO

/// Third parties' API keys. Only a signed-in session manages them: a key that could mint keys would let a
/// leaked key outlive its own revocation (the HTTP gate refuses these operations to keys as well).
extension AccountService {
    /// The longest expiry a key may be given.
    static let longestAPIKeyLifetime: TimeInterval = 5 * 366 * 86_400

    /// A new key: `scope` is `full` or `read_only` (default `full`); `expiresAt`, if given, is in the future
    /// and at most five years away.
    package func createAPIKey(
        _ principal: Principal, name: String?, scope rawScope: String? = nil, expiresAt: Date? = nil, now: Date = Date(),
        logger: Logger
    ) async throws -> (APIKeyStore.Key, SecretToken) {
        guard principal.role == .thirdParty else { throw WrongRole() }
        guard principal.credential.apiKeyScope == nil else { throw APIKeyError.sessionRequired }
        var errors: [FieldError] = []
        let name = validText(name ?? "API key", field: "name", maxLength: 100, into: &errors)
        let scope = APIKeyScope(rawValue: rawScope ?? APIKeyScope.full.rawValue)
        if scope == nil {
            errors.append(FieldError(field: "scope", message: "must be one of: full, read_only"))
        }
        if let expiresAt, expiresAt <= now {
            errors.append(FieldError(field: "expiresAt", message: "must be in the future"))
        } else if let expiresAt, expiresAt.timeIntervalSince(now) > Self.longestAPIKeyLifetime {
            errors.append(FieldError(field: "expiresAt", message: "must be at most five years away"))
        }
        guard errors.isEmpty, let name, let scope else { throw AccountError.invalid(errors) }
        let secret = SecretToken.generate(.apiKey)
        let key = try await client.withTransaction(logger: logger) { connection in
            let key = try await APIKeyStore.create(
                accountID: principal.accountID, name: name, scope: scope, expiresAt: expiresAt, secret: secret, on: connection,
                logger: logger)
            var details: [String: AuditValue] = ["keyId": .string(key.id.uuidString.lowercased()), "scope": .string(scope.rawValue)]
            if let expiresAt { details["expiresAt"] = .string(Timestamp.rfc3339(expiresAt)) }
            try await AuditLog.append(
                AuditEvent(
                    actorID: principal.accountID.uuidString.lowercased(), actorRole: principal.role.rawValue,
                    action: AuditAction.apiKeyCreated, details: details),
                on: connection, logger: logger)
            return key
        }
        return (key, secret)
    }

    package func listAPIKeys(_ principal: Principal, cursor: PageCursor?, limit: Int, logger: Logger) async throws
        -> Page<APIKeyStore.Key>
    {
        guard principal.role == .thirdParty else { throw WrongRole() }
        return try await client.withConnection {
            try await APIKeyStore.list(accountID: principal.accountID, after: cursor, limit: limit, on: $0, logger: logger)
        }
    }

    package func revokeAPIKey(_ principal: Principal, id: UUID, logger: Logger) async throws {
        guard principal.role == .thirdParty else { throw WrongRole() }
        guard principal.credential.apiKeyScope == nil else { throw APIKeyError.sessionRequired }
        do {
            try await client.withTransaction(logger: logger) { connection in
                guard try await APIKeyStore.revoke(id: id, accountID: principal.accountID, on: connection, logger: logger) else {
                    throw AccountError.apiKeyNotFound
                }
                try await AuditLog.append(
                    AuditEvent(
                        actorID: principal.accountID.uuidString.lowercased(), actorRole: principal.role.rawValue,
                        action: AuditAction.apiKeyRevoked, details: ["keyId": .string(id.uuidString.lowercased())]),
                    on: connection, logger: logger)
            }
        } catch {
            throw PostgresErrors.unwrapTransaction(error)
        }
    }
}
