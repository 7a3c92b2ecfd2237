import Foundation

/// What the privacy rules refuse.
package enum PrivacyError: Error, Equatable {
    /// The company's budget for the period cannot pay for this release; `renewsAt` is when enough returns.
    case budgetExhausted(renewsAt: Date?, cost: Double)
    /// The request alone costs more than a whole period's budget.
    case costsMoreThanBudget(cost: Double, budget: Double)
}
