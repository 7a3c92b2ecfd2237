import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func createSession(_ input: Operations.CreateSession.Input) async throws -> Operations.CreateSession.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        switch try await services.accounts.logIn(
            email: body.email, password: body.password, clientAddress: RequestScope.current.clientAddress, logger: logger)
        {
        case .session(let session): return .created(.init(body: .json(.init(session))))
        case .secondFactorRequired(let challenge):
            return .ok(.init(body: .json(.init(secondFactorChallenge: challenge.token.text, expiresAt: challenge.expiresAt))))
        }
    }

    func deleteCurrentSession(_ input: Operations.DeleteCurrentSession.Input) async throws
        -> Operations.DeleteCurrentSession.Output
    {
        try await services.accounts.logOut(try await caller(), logger: logger)
        return .noContent(.init())
    }

    func createAPIKey(_ input: Operations.CreateAPIKey.Input) async throws -> Operations.CreateAPIKey.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let (key, secret) = try await services.accounts.createAPIKey(
            principal, name: body.name, scope: body.scope?.rawValue, expiresAt: body.expiresAt, logger: logger)
        return .created(
            .init(
                body: .json(
                    .init(
                        id: key.id.uuidString.lowercased(), name: key.name, prefix: key.prefix,
                        scope: .init(key.scope), createdAt: key.createdAt, expiresAt: key.expiresAt,
                        secret: secret.text))))
    }

    func listAPIKeys(_ input: Operations.ListAPIKeys.Input) async throws -> Operations.ListAPIKeys.Output {
        let principal = try await caller()
        let page = try await services.accounts.listAPIKeys(
            principal, page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), logger: logger)
        let items = page.items.map {
            Components.Schemas.APIKey(
                id: $0.id.uuidString.lowercased(), name: $0.name, prefix: $0.prefix,
                scope: .init($0.scope), createdAt: $0.createdAt, expiresAt: $0.expiresAt,
                lastUsedAt: $0.lastUsedAt)
        }
        return .ok(.init(body: .json(.init(items: items, nextCursor: page.next?.text))))
    }

    func deleteAPIKey(_ input: Operations.DeleteAPIKey.Input) async throws -> Operations.DeleteAPIKey.Output {
        let principal = try await caller()
        // A malformed id cannot name anyone's key: the same 404 as a key that is not the caller's.
        guard let id = UUID(uuidString: input.path.id) else { throw AccountError.apiKeyNotFound }
        try await services.accounts.revokeAPIKey(principal, id: id, logger: logger)
        return .noContent(.init())
    }
}

extension Components.Schemas.Session {
    init(_ session: AccountService.NewSession) {
        self.init(
            token: session.token.text, role: .init(session.role), accountId: session.accountID.uuidString.lowercased(),
            expiresAt: session.expiresAt)
    }
}
