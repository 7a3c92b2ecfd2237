import Foundation
import Logging

/// What a company and the auditors can see of the privacy budget: an estimate before sending, the
/// company's budget, and the ledger.
extension GroupRequestService {
    /// The (ε, δ) guarantees are stated at this δ: below one in the population of any deployment we plan.
    static let reportingDelta = 1e-7

    package struct Estimate: Sendable {
        package struct TypeAccuracy: Sendable {
            package var type: SampleType
            package var peopleStdDev, sumStdDev, percentileRho, percentileStep: Double
            /// Fractions of the cell's loss: the count's, the sum's, and each percentile's.
            package var split: (count: Double, sum: Double, eachPercentile: Double)
            package var meanMargin95AtK, meanMargin95At10K: Double
            package var medianRankMargin95AtK, medianRankMargin95At10K: Double
            package var bounds: ClosedRange<Double>
        }
        package var cells: Int
        package var cellLoss: Double
        package var rho: Double
        package var epsilon: Double
        package var delta: Double
        package var budget: CompanyBudget
        package var affordable: Bool
        /// Whether the request costs no more than one company may take from a person in twelve months
        /// (`budget.personShareRho`): a dearer one would be answered from nobody, so sending it is a 422.
        package var withinShare: Bool
        package var types: [TypeAccuracy]
    }

    /// `estimate` of a creation as an edge read it: the caller's role is checked before what they sent, so a
    /// person or an auditor learns nothing about how the request would have been read.
    package func estimate(_ read: CreationAsRead, by principal: Principal, logger: Logger) async throws -> Estimate {
        guard principal.role == .thirdParty else { throw WrongRole("Only third parties send group requests.") }
        return try await estimate(try creation(from: read), by: principal, logger: logger)
    }

    /// The cost and the accuracy of a request, from the request alone: no one's data is read.
    package func estimate(_ creation: Creation, by principal: Principal, logger: Logger) async throws -> Estimate {
        guard principal.role == .thirdParty else { throw WrongRole("Only third parties send group requests.") }
        let valid = try Self.validate(creation, privacy: privacy)
        let cells = initialBuckets(of: valid, now: clock.now).count * valid.types.count
        let cost = valid.cellLoss * (cells + 1)
        let budget = try await budget(for: principal, logger: logger)
        let k = Double(minimumCohort)
        return Estimate(
            cells: cells, cellLoss: valid.cellLoss.rho, rho: cost.rho, epsilon: cost.epsilon(delta: Self.reportingDelta),
            delta: Self.reportingDelta, budget: budget, affordable: cost <= budget.remaining && cost <= budget.personShare,
            withinShare: cost <= budget.personShare,
            types: valid.types.map { type in
                let calibration = CellCalibration(type: type, loss: valid.cellLoss)
                // The mean at a bound is the worst case of the count's share of the error.
                let worst = calibration.bounds.upper
                return .init(
                    type: type, peopleStdDev: calibration.countStandardDeviation, sumStdDev: calibration.sumStandardDeviation,
                    percentileRho: calibration.percentileLoss.rho, percentileStep: calibration.bounds.binWidth,
                    split: (calibration.split.count, calibration.split.sum, calibration.split.percentile),
                    meanMargin95AtK: calibration.meanMargin(people: k, mean: worst),
                    meanMargin95At10K: calibration.meanMargin(people: 10 * k, mean: worst),
                    medianRankMargin95AtK: calibration.percentileRankMargin(.p50, people: k),
                    medianRankMargin95At10K: calibration.percentileRankMargin(.p50, people: 10 * k),
                    bounds: calibration.bounds.lower...calibration.bounds.upper)
            })
    }

    package func budget(for principal: Principal, logger: Logger) async throws -> CompanyBudget {
        guard principal.role == .thirdParty else { throw WrongRole("Only companies have a privacy budget.") }
        return try await client.withConnection { try await budgets.companyBudget(principal.accountID, on: $0, logger: logger) }
    }

    /// The ledger, newest first: everything for auditors.
    package func ledger(for principal: Principal, page: PageRequest, logger: Logger) async throws -> Page<LedgerEntry> {
        guard principal.role == .auditor else { throw WrongRole("Only auditors read the privacy ledger.") }
        // The cursor is the last entry's id, which every item shows anyway: nothing to seal.
        let (limit, after) = try page.read { $0.sequence }
        let rows = try await client.withConnection {
            try await PrivacyLedgerStore.entries(company: nil, after: after, limit: limit, on: $0, logger: logger)
        }
        return Page(rows: rows, limit: limit) { PageCursor(sequence: $0.id) }
    }
}
