import Foundation

/// The authenticated caller of a request.
package struct Principal: Sendable, Equatable {
    package var accountID: UUID
    package var role: Role
    package var credential: Credential
    /// An auditor without a confirmed second factor: until they enrol, they may do nothing but enrol (and
    /// read their account, and sign out). Only sessions carry it: API keys are companies'.
    package var mustEnrolSecondFactor = false

    package init(accountID: UUID, role: Role, credential: Credential) {
        (self.accountID, self.role, self.credential) = (accountID, role, credential)
    }

    /// How the caller proved who they are; logout revokes exactly this.
    package enum Credential: Sendable, Equatable {
        case session(tokenHash: Data)
        case apiKey(id: UUID, scope: APIKeyScope)

        /// The scope of the key this caller used, or nil for a session.
        package var apiKeyScope: APIKeyScope? {
            if case .apiKey(_, let scope) = self { scope } else { nil }
        }
    }
}
