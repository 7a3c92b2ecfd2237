import Foundation

/// An account and the fields of its role, as stored (never with its password hash).
package struct Account: Sendable, Equatable {
    package var id: UUID
    package var role: Role
    package var email: String
    package var status: AccountStatus
    package var createdAt: Date
    package var activatedAt: Date?
    package var profile: Profile
    /// What its pages and mails are written in (profile setting; at registration, the client's `Accept-Language`).
    package var language: Language = .fallback

    /// Role-specific fields.
    package enum Profile: Sendable, Equatable {
        /// `timeZone`: the IANA name whose days the person's data uses; nil until known (UTC days).
        case user(fullName: String, fiscalCode: String, birthDate: String, sex: String, timeZone: String?)
        case thirdParty(companyName: String, vatNumber: String, description: String?)
        case auditor
    }
}
