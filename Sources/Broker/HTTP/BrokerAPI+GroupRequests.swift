import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func createGroupRequest(_ input: Operations.CreateGroupRequest.Input) async throws -> Operations.CreateGroupRequest.Output {
        let principal = try await caller(rateLimited: .groupRequests)
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let request = try await groupRequests.create(
            .init(
                types: body.types,
                filters: (body.filters ?? []).map { .init(type: $0._type, min: $0.min, max: $0.max) },
                ageMin: body.demographics?.ageMin, ageMax: body.demographics?.ageMax, sex: body.demographics?.sex?.rawValue,
                windowFrom: body.window.from, windowTo: body.window.to, bucket: body.bucket.rawValue,
                purpose: body.purpose, subscriptionDays: body.subscription?.days),
            by: principal, logger: logger)
        return .created(.init(body: .json(.init(request))))
    }

    func listGroupRequests(_ input: Operations.ListGroupRequests.Input) async throws -> Operations.ListGroupRequests.Output {
        let principal = try await caller(.thirdParty)
        let page = try page(limit: input.query.limit, cursor: input.query.cursor)
        let requests = try await groupRequests.list(
            for: principal, status: input.query.status.flatMap { GroupRequest.Status(rawValue: $0.rawValue) }, cursor: page.cursor,
            limit: page.limit, logger: logger)
        return .ok(.init(body: .json(.init(items: requests.rows.map(Components.Schemas.GroupRequest.init), nextCursor: requests.nextCursor))))
    }

    func getGroupRequest(_ input: Operations.GetGroupRequest.Input) async throws -> Operations.GetGroupRequest.Output {
        let principal = try await caller(.thirdParty)
        let request = try await groupRequests.request(id: try groupRequestID(input.path.id), for: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    func getGroupRequestResults(_ input: Operations.GetGroupRequestResults.Input) async throws -> Operations.GetGroupRequestResults.Output {
        let principal = try await caller(rateLimited: .downloads, roles: [.thirdParty])
        let format = try ResponseFormat.negotiate(format: input.query.format?.rawValue, accept: input.headers.accept.map(\.contentType.rawValue))
        let release = try await groupRequests.results(id: try groupRequestID(input.path.id), for: principal, logger: logger)
        switch format {
        case .json: return .ok(.init(body: .json(.init(release))))
        case .csv: return .ok(.init(body: .csv(HTTPBody(GroupResultsCSV.text(release)))))
        }
    }

    func endGroupRequestSubscription(_ input: Operations.EndGroupRequestSubscription.Input) async throws
        -> Operations.EndGroupRequestSubscription.Output
    {
        let principal = try await caller()
        let request = try await groupRequests.endSubscription(id: try groupRequestID(input.path.id), by: principal, logger: logger)
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
            types: request.types.map { .init(rawValue: $0.rawValue) ?? .heartRate },
            filters: request.filters.map { .init(_type: $0.type.rawValue, min: $0.min, max: $0.max) },
            demographics: .init(ageMin: request.demographics.ageMin, ageMax: request.demographics.ageMax,
                                sex: request.demographics.sex.flatMap { .init(rawValue: $0.rawValue) }),
            window: .init(from: request.windowFrom.description, to: request.windowTo.description),
            bucket: .init(rawValue: request.bucket.rawValue) ?? .day,
            purpose: request.purpose,
            status: .init(rawValue: request.status.rawValue) ?? .refused,
            refusalReason: request.refusalReason.flatMap { .init(rawValue: $0.rawValue) },
            cohortSize: request.cohortSize,
            createdAt: request.createdAt,
            subscription: request.subscription.map {
                .init(days: $0.days, status: .init(rawValue: $0.status.rawValue) ?? .active, endsAt: $0.endsAt, endedAt: $0.endedAt)
            })
    }
}

extension Components.Schemas.GroupResults {
    init(_ release: GroupRelease) {
        self.init(releasedAt: release.releasedAt, items: release.cells.map { cell in
            .init(bucketStart: cell.bucketStart, _type: .init(rawValue: cell.type.rawValue) ?? .heartRate, unit: cell.type.unit,
                  people: cell.people, mean: cell.mean, p10: cell.p10, p50: cell.p50, p90: cell.p90, suppressed: cell.suppressed)
        })
    }
}

/// Released results as RFC 4180 CSV; a suppressed cell's figures are empty.
enum GroupResultsCSV {
    static func text(_ release: GroupRelease) -> String {
        var lines = ["bucket_start,type,unit,people,mean,p10,p50,p90,suppressed"]
        for cell in release.cells {
            let figures = [cell.people.map(String.init), cell.mean.map(ReleasedSampleEncoder.number), cell.p10.map(ReleasedSampleEncoder.number),
                           cell.p50.map(ReleasedSampleEncoder.number), cell.p90.map(ReleasedSampleEncoder.number)].map { $0 ?? "" }
            lines.append(([cell.bucketStart, cell.type.rawValue, cell.type.unit] + figures + [cell.suppressed ? "true" : "false"])
                .joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
