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
        _ principal: Principal, name: String?, scope rawScope: String? = nil, expiresAt: Date? = nil,
        logger: Logger
    ) async throws -> (APIKeyStore.Key, SecretToken) {
        guard principal.role == .thirdParty else { throw WrongRole() }
        guard principal.credential.apiKeyScope == nil else { throw APIKeyError.sessionRequired }
        var errors: [FieldError] = []
        let now = clock.now
        let name = validText(name ?? "API key", field: "name", maxLength: 100, singleLine: true, into: &errors)
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
            // The caller was authenticated on another connection, before this transaction: a password change
            // may have revoked the session since, or be revoking it now. Its revocation of the keys (READ
            // COMMITTED) would not see a key inserted here and not yet committed, so the key would outlive
            // the password. The account's row lock serialises the two (the change updates that row): once we
            // hold it, the change has committed, and the session is re-checked here, or has not started, and
            // its revocation will see this key.
            guard try await AccountStore.lockCredentials(accountID: principal.accountID, on: connection, logger: logger)?.active == true,
                case .session(let tokenHash) = principal.credential,
                try await SessionStore.isLive(tokenHash: tokenHash, accountID: principal.accountID, on: connection, logger: logger)
            else { throw AccountError.unauthenticated }
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
            // The owner hears of every new key, so one made by someone who knew the password does not go
            // unnoticed. Written in the transaction, like the activation mail: a key nobody is told of is not made.
            guard let owner = try await AccountStore.account(id: principal.accountID, on: connection, logger: logger) else {
                throw AccountError.unauthenticated
            }
            let language = try await outbox.language(of: owner.id, on: connection, logger: logger)
            try await outbox.enqueue(
                APIKeyCreatedMail.make(to: owner.email, key: key, language: language, publicURL: publicURL), kind: .apiKeyCreated,
                accountID: owner.id, on: connection, logger: logger)
            return key
        }
        return (key, secret)
    }

    /// Why an account's keys were all revoked (the audit log's `reason`).
    package enum APIKeyRevocationReason: String, Sendable {
        case passwordChanged = "password_changed"
        case passwordReset = "password_reset"
    }

    /// Revokes every live API key of the account, each with its audit event; returns how many. The one place
    /// that ends an account's keys together: a password change calls it unless the owner keeps the keys, and
    /// a password reset always, with a reason of its own.
    func revokeAllAPIKeys(
        of accountID: UUID, reason: APIKeyRevocationReason, actor: (id: String?, role: String), on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Int {
        let ids = try await APIKeyStore.revokeAll(accountID: accountID, on: connection, logger: logger)
        for id in ids {
            try await AuditLog.append(
                AuditEvent(
                    actorID: actor.id, actorRole: actor.role, action: AuditAction.apiKeyRevoked,
                    details: ["keyId": .string(id.uuidString.lowercased()), "reason": .string(reason.rawValue)]),
                on: connection, logger: logger)
        }
        if !ids.isEmpty { logger.info("api keys revoked", metadata: ["count": "\(ids.count)", "reason": "\(reason.rawValue)"]) }
        return ids.count
    }

    package func listAPIKeys(_ principal: Principal, page: PageRequest, logger: Logger) async throws
        -> Page<APIKeyStore.Key>
    {
        guard principal.role == .thirdParty else { throw WrongRole() }
        let (limit, after) = try page.readByTimeAndID()
        return try await client.withConnection {
            try await APIKeyStore.list(accountID: principal.accountID, after: after, limit: limit, on: $0, logger: logger)
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
