import Foundation
import Logging
import PostgresNIO

/// The budget rules, applied inside the caller's transaction so a debit commits or rolls back with the
/// release it pays for. Callers hold `PrivacyLedgerStore.lock` first.
struct PrivacyBudgets: Sendable {
    let settings: PrivacySettings

    func companyBudget(_ company: UUID, on connection: PostgresConnection, logger: Logger) async throws -> CompanyBudget {
        let entries = try await PrivacyLedgerStore.companyEntries(company, days: settings.companyPeriodDays, on: connection, logger: logger)
        return CompanyBudget(
            limit: PrivacyLoss(rho: settings.companyBudget), spent: entries.reduce(.zero) { $0 + $1.loss },
            periodDays: settings.companyPeriodDays, renewsAt: entries.first.map { renewal(of: $0.at) },
            personCap: settings.personGroupBudget, personShare: settings.companyShareLoss, personShareOfCap: settings.companyShare)
    }

    private func renewal(of at: Date) -> Date { at.addingTimeInterval(TimeInterval(settings.companyPeriodDays) * 86_400) }

    /// Throws `PrivacyError.budgetExhausted` (with when enough of the budget returns) unless `cost` fits.
    func ensureAffordable(_ cost: PrivacyLoss, by company: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        let limit = PrivacyLoss(rho: settings.companyBudget)
        guard cost <= limit else { throw PrivacyError.costsMoreThanBudget(cost: cost.rho, budget: limit.rho) }
        let entries = try await PrivacyLedgerStore.companyEntries(company, days: settings.companyPeriodDays, on: connection, logger: logger)
        var available = limit - entries.reduce(.zero) { $0 + $1.loss }
        guard available < cost else { return }
        for entry in entries {
            available = available + entry.loss
            if available >= cost { throw PrivacyError.budgetExhausted(renewsAt: renewal(of: entry.at), cost: cost.rho) }
        }
        throw PrivacyError.budgetExhausted(renewsAt: nil, cost: cost.rho)
    }

    /// Checks and records a company's debit.
    func charge(
        _ cost: PrivacyLoss, to company: UUID, request: UUID, kind: LedgerEntry.Kind, cells: Int, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await ensureAffordable(cost, by: company, on: connection, logger: logger)
        try await PrivacyLedgerStore.record(company: company, request: request, kind: kind, cells: cells, loss: cost, on: connection, logger: logger)
    }

    /// The members who can still afford `cost` from `company` this year: within their own cap, and within
    /// the company's share of it (`PRIVACY_COMPANY_SHARE`), so one company cannot take the whole of anyone.
    func eligible(_ cohort: [Int32], cost: PrivacyLoss, company: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> [Int32]
    {
        try await PrivacyLedgerStore.withinCapAndShare(
            cohort, cost: cost, cap: settings.personGroupBudget, company: company, share: settings.companyShareLoss, on: connection,
            logger: logger)
    }
}
