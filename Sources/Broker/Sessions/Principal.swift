import Foundation

/// The authenticated caller of a request.
public struct Principal: Sendable, Equatable {
    public var accountID: UUID
    public var role: Role
    public var credential: Credential

    public init(accountID: UUID, role: Role, credential: Credential) {
        (self.accountID, self.role, self.credential) = (accountID, role, credential)
    }

    /// How the caller proved who they are; logout revokes exactly this.
    public enum Credential: Sendable, Equatable {
        case session(tokenHash: Data)
        case apiKey(id: UUID, scope: APIKeyScope)

        /// The scope of the key this caller used, or nil for a session.
        public var apiKeyScope: APIKeyScope? {
            if case .apiKey(_, let scope) = self { scope } else { nil }
        }
    }
}
