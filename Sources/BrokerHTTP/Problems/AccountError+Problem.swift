import BrokerDomain
import Foundation
import HTTPTypes

/// How a `AccountError` is answered over HTTP.
extension AccountError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .invalid(let errors):
            Problem.validationFailed(errors)
        case .emailTaken:
            Problem(
                status: .conflict, slug: "email-taken", title: "Email already registered",
                detail: "An account with this email already exists.")
        case .fiscalCodeTaken:
            Problem(
                status: .conflict, slug: "fiscal-code-taken", title: "Fiscal code already registered",
                detail: "An account with this fiscal code already exists.")
        case .vatNumberTaken:
            Problem(
                status: .conflict, slug: "vat-number-taken", title: "VAT number already registered",
                detail: "A company with this VAT number already exists.")
        case .activationTokenUnknown:
            Problem(
                status: .notFound, slug: "activation-token-unknown", title: "Unknown activation token",
                detail: "This activation token does not exist or was already used.")
        case .activationTokenExpired:
            Problem(
                status: .gone, slug: "activation-token-expired", title: "Activation token expired",
                detail: "Activation tokens are valid for 24 hours; ask for a new activation mail.")
        case .passwordResetTokenUnknown:
            Problem(
                status: .notFound, slug: "password-reset-token-unknown", title: "Unknown password reset token",
                detail: "This password reset token does not exist, was already used, or a newer one was mailed since.")
        case .passwordResetTokenExpired:
            Problem(
                status: .gone, slug: "password-reset-token-expired", title: "Password reset token expired",
                detail: "Password reset tokens are valid for one hour; ask for a new password reset mail.")
        case .registrationExpired(let hours):
            Problem(
                status: .gone, slug: "registration-expired", title: "Registration expired",
                detail: "This account was not activated within \(hours) hours and no longer exists; register again.")
        case .wrongCredentials:
            Problem(
                status: .unauthorized, slug: "wrong-credentials", title: "Wrong email or password",
                detail: "The email or the password is wrong.")
        case .notActivated:
            Problem(
                status: .forbidden, slug: "account-not-activated", title: "Account not activated",
                detail: "Activate the account with the token from the activation mail first.")
        case .tooManyAttempts(let seconds):
            Problem(
                status: .tooManyRequests, slug: "too-many-attempts", title: "Too many failed logins",
                detail: "Too many failed logins; try again in \(seconds) seconds.",
                headers: [.retryAfter: String(seconds)])
        case .unauthenticated:
            Problem(
                status: .unauthorized, slug: "unauthenticated", title: "Authentication required",
                detail: "Send a valid session token or API key as `Authorization: Bearer <token>`.",
                headers: [.wwwAuthenticate: "Bearer"])
        case .wrongPassword:
            Problem.validationFailed([FieldError(field: "password", message: "is wrong")])
        case .apiKeyNotFound:
            Problem(status: .notFound, slug: "not-found", title: "Not found", detail: "No such API key.")
        }
    }
}
