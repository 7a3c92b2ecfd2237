import Foundation

/// Who an account belongs to; each role sees and does different things.
public enum Role: String, Sendable, CaseIterable {
    case user
    case thirdParty = "third_party"
    case auditor
}

public enum AccountStatus: String, Sendable {
    case pending, active
}

/// An account and the fields of its role, as stored (never with its password hash).
public struct Account: Sendable, Equatable {
    public var id: UUID
    public var role: Role
    public var email: String
    public var status: AccountStatus
    public var createdAt: Date
    public var activatedAt: Date?
    public var profile: Profile

    /// Role-specific fields.
    public enum Profile: Sendable, Equatable {
        /// `timeZone`: the IANA name whose days the person's data uses; nil until known (UTC days).
        case user(fullName: String, fiscalCode: String, birthDate: String, sex: String, timeZone: String?)
        case thirdParty(companyName: String, vatNumber: String, description: String?)
        case auditor
    }
}
