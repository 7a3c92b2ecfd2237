import BrokerDomain
import Foundation
import HTTPTypes

/// How a `PrivacyError` is answered over HTTP.
extension PrivacyError: ProblemConvertible {
    package var problem: Problem {
        switch self {
        case .budgetExhausted(let renewsAt, let cost):
            var problem = Problem(
                status: .tooManyRequests, slug: "privacy-budget-exhausted", title: "Privacy budget exhausted",
                // Each variant one literal, so that its translation is found (`ProblemTranslation`).
                detail: renewsAt.map {
                    "This release would cost ρ = \(PrivacyFormat.rho(cost)), more than what remains of your privacy budget until \(Timestamp.rfc3339($0)), when earlier releases stop counting."
                } ?? "This release would cost ρ = \(PrivacyFormat.rho(cost)), more than what remains of your privacy budget.")
            if let renewsAt {
                problem.members["renewsAt"] = Timestamp.rfc3339(renewsAt)
                problem.headers[.retryAfter] = String(max(1, Int(renewsAt.timeIntervalSinceNow.rounded(.up))))
            }
            return problem
        case .costsMoreThanBudget(let cost, let budget):
            return Problem.validationFailed([
                FieldError(
                    field: "types",
                    message: "This request costs ρ = \(PrivacyFormat.rho(cost)), more than your whole budget of ρ = "
                        + "\(PrivacyFormat.rho(budget)) per period: ask for fewer buckets or types, or a lower privacy.cellLoss.")
            ])
        }
    }
}
