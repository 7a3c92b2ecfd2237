import Foundation

/// A company's budget as it stands: what it may spend per rolling period, what the period's releases have
/// spent, and when the oldest of them stops counting.
package struct CompanyBudget: Sendable, Equatable {
    var limit: PrivacyLoss
    var spent: PrivacyLoss
    package var periodDays: Int
    /// When the oldest debit of the period ages out (nil: nothing spent).
    package var renewsAt: Date?
    var remaining: PrivacyLoss { max(.zero, limit - spent) }
    package var limitRho: Double { limit.rho }
    package var spentRho: Double { spent.rho }
    package var remainingRho: Double { remaining.rho }
}
