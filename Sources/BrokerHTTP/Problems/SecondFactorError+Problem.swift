import BrokerDomain

/// How a `SecondFactorError` is answered over HTTP.
extension SecondFactorError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .enrolmentRequired:
            Problem(
                status: .forbidden, slug: "second-factor-required", title: "Second factor required",
                detail:
                    "Auditors must enrol a second factor before anything else: start with POST /v1/me/second-factor, "
                    + "then confirm it with a first code (POST /v1/me/second-factor/confirmation).")
        case .noPendingEnrolment:
            Problem(
                status: .conflict, slug: "no-pending-enrolment", title: "No enrolment to confirm",
                detail: "Start enrolling a second factor (POST /v1/me/second-factor) before confirming it.")
        case .notEnrolled:
            Problem(status: .conflict, slug: "second-factor-not-enrolled", title: "No second factor", detail: "This account has no second factor.")
        case .wrongCode(let field):
            Problem.validationFailed([FieldError(field: field, message: "is wrong, expired or already used")])
        case .wrongSecondFactor:
            Problem(
                status: .unauthorized, slug: "wrong-second-factor", title: "Wrong code",
                detail: "The code is wrong, expired or already used, or the sign-in has expired: sign in again if it keeps failing.")
        case .invalid(let errors):
            Problem.validationFailed(errors)
        }
    }
}
