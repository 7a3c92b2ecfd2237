import Foundation

/// The steps of a group request's evaluation (`GroupRequestService.create`), as `d4h-dev bench
/// group-requests` prints their shares of the whole path. Indented ones are parts of the step above them.
package enum EvaluationStep: String, CaseIterable, Sendable {
    case budgetCheck = "company budget, before any data is read"
    case cohort = "cohort: each filter's type on a connection of its own, intersected"
    case cohortFilter = "  one filter's people (the slowest of them)"
    case caps = "the cohort's yearly caps and company shares"
    case cells = "cells with DP: each type on a connection of its own"
    case cellsType = "  one type's exact aggregates and noise (the slowest of them)"
    case write = "under the ledger lock, one transaction with its commit"
    case lock = "  ledger lock"
    case capsAgain = "  the cohort's caps and shares again"
    case companyBudget = "  company budget again"
    case requestRow = "  the request's row"
    case debits = "  the people's debits"
    case release = "  the release's cells"
    case accessLog = "  the people's access-log rows"

    /// Whether the step is a part of another (its time is in its parent's).
    package var isPart: Bool { rawValue.hasPrefix(" ") }
}

/// Where an evaluation reports how long each step took: a seam for the bench only. A server and the tests
/// set none, and then nothing is timed.
package struct EvaluationStepTimer: Sendable {
    private let report: @Sendable (EvaluationStep, Duration) -> Void

    package init(_ report: @escaping @Sendable (_ step: EvaluationStep, _ took: Duration) -> Void) { self.report = report }

    func time<T>(_ step: EvaluationStep, _ work: () async throws -> T) async rethrows -> T {
        let start = ContinuousClock.now
        defer { report(step, ContinuousClock.now - start) }
        return try await work()
    }
}
