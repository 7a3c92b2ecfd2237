import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func createGroupRequest(_ input: Operations.CreateGroupRequest.Input) async throws -> Operations.CreateGroupRequest.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let request = try await budgeted.submitGroupRequest(.init(body), by: principal, logger: logger)
        return .created(.init(body: .json(.init(request))))
    }

    func estimateGroupRequest(_ input: Operations.EstimateGroupRequest.Input) async throws -> Operations.EstimateGroupRequest.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        return .ok(.init(body: .json(.init(try await services.groupRequests.estimate(.init(body), by: principal, logger: logger)))))
    }

    func getPrivacyBudget(_ input: Operations.GetPrivacyBudget.Input) async throws -> Operations.GetPrivacyBudget.Output {
        let principal = try await caller()
        return .ok(.init(body: .json(.init(try await services.groupRequests.budget(for: principal, logger: logger)))))
    }

    func auditListPrivacyLedger(_ input: Operations.AuditListPrivacyLedger.Input) async throws -> Operations.AuditListPrivacyLedger.Output {
        let principal = try await caller()
        let page = try await services.groupRequests.ledger(
            for: principal, page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), logger: logger)
        return .ok(.init(body: .json(.init(items: page.items.map(Components.Schemas.PrivacyLedgerEntry.init), nextCursor: page.next?.text))))
    }

    func listGroupRequests(_ input: Operations.ListGroupRequests.Input) async throws -> Operations.ListGroupRequests.Output {
        let principal = try await caller()
        let requests = try await services.groupRequests.list(
            for: principal, status: input.query.status.map(GroupRequest.Status.init),
            page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), logger: logger)
        return .ok(.init(body: .json(.init(items: requests.items.map(Components.Schemas.GroupRequest.init), nextCursor: requests.next?.text))))
    }

    func getGroupRequest(_ input: Operations.GetGroupRequest.Input) async throws -> Operations.GetGroupRequest.Output {
        let principal = try await caller()
        let request = try await services.groupRequests.request(id: try groupRequestID(input.path.id), for: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    func getGroupRequestResults(_ input: Operations.GetGroupRequestResults.Input) async throws -> Operations.GetGroupRequestResults.Output {
        let principal = try await caller()
        let format = try DownloadFormat.negotiate(format: input.query.format?.rawValue, accept: input.headers.accept.map(\.contentType.rawValue))
        let release = try await budgeted.groupResults(id: try groupRequestID(input.path.id), for: principal, logger: logger)
        switch format {
        // Group results are no Observations: FHIR is not offered, so `negotiate` never answers it here.
        case .json, .fhirBundle, .fhirNDJSON: return .ok(.init(body: .json(.init(release))))
        case .csv: return .ok(.init(body: .csv(HTTPBody(GroupResultsCSV.text(release)))))
        }
    }

    func endGroupRequestSubscription(_ input: Operations.EndGroupRequestSubscription.Input) async throws
        -> Operations.EndGroupRequestSubscription.Output
    {
        let principal = try await caller()
        let request = try await services.groupRequests.endSubscription(id: try groupRequestID(input.path.id), by: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    /// A malformed id names no request: the same 404 as someone else's.
    func groupRequestID(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw GroupRequestError.notFound }
        return id
    }
}

extension Components.Schemas.GroupRequest {
    init(_ request: GroupRequest) {
        self.init(
            id: request.id.uuidString.lowercased(),
            thirdParty: .init(request.thirdParty),
            types: request.types.map(Components.Schemas.SampleType.init),
            filters: request.filters.map { .init(_type: $0.type.rawValue, min: $0.min, max: $0.max) },
            demographics: .init(
                ageMin: request.demographics.ageMin, ageMax: request.demographics.ageMax,
                sex: request.demographics.sex.map(Components.Schemas.Demographics.SexPayload.init)),
            window: .init(from: request.windowFrom.description, to: request.windowTo.description),
            bucket: .init(request.bucket),
            purpose: request.purpose,
            status: .init(request.status),
            refusalReason: request.refusalReason.map(Components.Schemas.GroupRequest.RefusalReasonPayload.init),
            cohortSize: request.cohortSize,
            cellLoss: request.cellLoss?.rho,
            createdAt: request.createdAt,
            subscription: request.subscription.map {
                .init(days: $0.days, status: .init($0.status), endsAt: $0.endsAt, endedAt: $0.endedAt)
            },
            purposeCode: .init(request.purposeCode))
    }
}

extension Components.Schemas.GroupResults {
    init(_ release: GroupRelease) {
        self.init(
            releasedAt: release.releasedAt,
            items: release.cells.map { cell in
                .init(
                    bucketStart: cell.bucketStart, _type: .init(cell.type), unit: cell.type.unit,
                    people: cell.people, mean: cell.mean, p10: cell.p10, p50: cell.p50, p90: cell.p90, suppressed: cell.suppressed,
                    accuracy: cell.accuracy.map {
                        .init(
                            peopleStdDev: $0.peopleStdDev, sumStdDev: $0.sumStdDev, percentileRho: $0.percentileRho,
                            percentileStep: $0.percentileStep, binStdDev: $0.binStdDev, binWidth: $0.binWidth,
                            meanMargin95: $0.meanMargin95, percentileRankMargin95: $0.percentileRankMargin95,
                            p10Margin95: $0.p10Margin95, p50Margin95: $0.p50Margin95, p90Margin95: $0.p90Margin95, rho: $0.rho)
                    })
            })
    }
}

extension Components.Schemas.PrivacyBudget {
    init(_ budget: CompanyBudget) {
        self.init(
            rho: budget.limitRho, spent: budget.spentRho, remaining: budget.remainingRho, periodDays: budget.periodDays,
            renewsAt: budget.renewsAt, personCap: budget.personCapRho, personShare: budget.personShareRho,
            personShareOfCap: budget.personShareOfCap)
    }
}

extension Components.Schemas.GroupRequestEstimate {
    init(_ estimate: GroupRequestService.Estimate) {
        self.init(
            cells: estimate.cells, cellLoss: estimate.cellLoss, rho: estimate.rho, epsilon: estimate.epsilon, delta: estimate.delta,
            budget: .init(estimate.budget), affordable: estimate.affordable, withinShare: estimate.withinShare,
            types: estimate.types.map {
                .init(
                    _type: .init($0.type), unit: $0.type.unit, peopleStdDev: $0.peopleStdDev,
                    sumStdDev: $0.sumStdDev, percentileRho: $0.percentileRho, percentileStep: $0.percentileStep,
                    split: .init(count: $0.split.count, sum: $0.split.sum, eachPercentile: $0.split.eachPercentile),
                    meanMargin95AtK: $0.meanMargin95AtK, meanMargin95At10K: $0.meanMargin95At10K,
                    medianRankMargin95AtK: $0.medianRankMargin95AtK, medianRankMargin95At10K: $0.medianRankMargin95At10K,
                    bounds: [$0.bounds.lowerBound, $0.bounds.upperBound])
            })
    }
}

extension Components.Schemas.PrivacyLedgerEntry {
    init(_ entry: LedgerEntry) {
        self.init(
            id: String(entry.id), at: entry.at, companyId: entry.companyID?.uuidString.lowercased(),
            requestId: entry.requestID?.uuidString.lowercased(), kind: .init(entry.kind),
            cells: entry.cells, rho: entry.rho)
    }
}

/// Released results as RFC 4180 CSV; a suppressed cell's figures are empty. The noise columns follow the
/// figures (empty in releases from before differential privacy): `bin_sd` and `bin_width` only in releases
/// from before issue 32 (percentiles from a noisy histogram), the `percentile_*` and margin columns after.
package enum GroupResultsCSV {
    package static func text(_ release: GroupRelease) -> String {
        var lines = [
            "bucket_start,type,unit,people,mean,p10,p50,p90,suppressed,people_sd,sum_sd,bin_sd,bin_width,mean_margin95,rho,"
                + "percentile_rho,percentile_step,p10_margin95,p50_margin95,p90_margin95"
        ]
        let number = ReleasedSampleEncoder.number
        for cell in release.cells {
            let figures = [
                cell.people.map(String.init), cell.mean.map(number), cell.p10.map(number),
                cell.p50.map(number), cell.p90.map(number),
            ].map { $0 ?? "" }
            let accuracy = cell.accuracy
            let noise = [
                accuracy.map { number($0.peopleStdDev) }, accuracy.map { number($0.sumStdDev) }, accuracy?.binStdDev.map(number),
                accuracy?.binWidth.map(number), accuracy?.meanMargin95.map(number), accuracy.map { number($0.rho) },
                accuracy?.percentileRho.map(number), accuracy?.percentileStep.map(number), accuracy?.p10Margin95.map(number),
                accuracy?.p50Margin95.map(number), accuracy?.p90Margin95.map(number),
            ].map { $0 ?? "" }
            lines.append(
                ([cell.bucketStart, cell.type.rawValue, cell.type.unit] + figures + [cell.suppressed ? "true" : "false"] + noise)
                    .joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
