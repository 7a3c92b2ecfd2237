import Foundation

/// Where an account stands with its second factor.
package struct SecondFactorStatus: Sendable, Equatable {
    /// A confirmed factor: sign-in asks for a code.
    package var enabled: Bool
    package var enabledAt: Date?
    /// An enrolment started and not confirmed yet (it changes nothing until it is).
    package var pendingEnrolment: Bool
    package var unusedRecoveryCodes: Int
    /// The account's role must have one (auditors).
    package var required: Bool
}
