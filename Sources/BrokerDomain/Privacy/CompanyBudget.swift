import Foundation

/// A company's budget as it stands: what it may spend per rolling period, what the period's releases have
/// spent, and when the oldest of them stops counting; and how much of each person's yearly cap it may take.
package struct CompanyBudget: Sendable, Equatable {
    var limit: PrivacyLoss
    var spent: PrivacyLoss
    package var periodDays: Int
    /// When the oldest debit of the period ages out (nil: nothing spent).
    package var renewsAt: Date?
    /// What group requests may take from one person in twelve months, across every company.
    var personCap: PrivacyLoss
    /// What this company may take of that from one person over the same months (`PRIVACY_COMPANY_SHARE`).
    var personShare: PrivacyLoss
    /// `personShare` as the configured fraction of `personCap`.
    package var personShareOfCap: Double
    var remaining: PrivacyLoss { max(.zero, limit - spent) }
    package var limitRho: Double { limit.rho }
    package var spentRho: Double { spent.rho }
    package var remainingRho: Double { remaining.rho }
    package var personCapRho: Double { personCap.rho }
    package var personShareRho: Double { personShare.rho }
}
