import Foundation

/// Who an account belongs to; each role sees and does different things.
package enum Role: String, Sendable, CaseIterable {
    case user
    case thirdParty = "third_party"
    case auditor
}

package enum AccountStatus: String, Sendable {
    case pending, active
}

/// An account and the fields of its role, as stored (never with its password hash).
package struct Account: Sendable, Equatable {
    package var id: UUID
    package var role: Role
    package var email: String
    package var status: AccountStatus
    package var createdAt: Date
    package var activatedAt: Date?
    package var profile: Profile

    /// Role-specific fields.
    package enum Profile: Sendable, Equatable {
        /// `timeZone`: the IANA name whose days the person's data uses; nil until known (UTC days).
        case user(fullName: String, fiscalCode: String, birthDate: String, sex: String, timeZone: String?)
        case thirdParty(companyName: String, vatNumber: String, description: String?)
        case auditor
    }
}
