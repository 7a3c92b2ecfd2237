/// Everything that can go wrong with the second factor, each with the status the contract gives it.
package enum SecondFactorError: Error, Equatable, Sendable {
    /// An auditor signed in without a confirmed second factor asked for anything but enrolling (403).
    case enrolmentRequired
    /// Confirming, with no enrolment started (409).
    case noPendingEnrolment
    /// Turning off (or replacing) a factor the account does not have (409).
    case notEnrolled
    /// The code (or recovery code) is wrong, already used, or from another secret (422 on the account's own
    /// forms, where the caller is signed in; 401 at sign-in, `wrongSecondFactor`).
    case wrongCode(field: String)
    /// The sign-in's second step: the challenge is unknown, expired or used, or the code is wrong (401, one
    /// answer for all, so it says nothing about which).
    case wrongSecondFactor
    /// The request names no code, or both a code and a recovery code (422).
    case invalid([FieldError])
}
