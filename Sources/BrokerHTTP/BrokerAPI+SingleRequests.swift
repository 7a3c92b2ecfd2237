import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func createSingleRequest(_ input: Operations.CreateSingleRequest.Input) async throws -> Operations.CreateSingleRequest.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let request = try await services.singleRequests.create(
            .init(
                email: body.subject.email, fiscalCode: body.subject.fiscalCode, types: body.types, purpose: body.purpose,
                windowFrom: body.window?.from, windowTo: body.window?.to, subscriptionDays: body.subscription?.days,
                purposeCode: body.purposeCode, expiresAt: body.expiresAt),
            by: principal, logger: logger)
        return .created(.init(body: .json(.init(request))))
    }

    func listSingleRequests(_ input: Operations.ListSingleRequests.Input) async throws -> Operations.ListSingleRequests.Output {
        let principal = try await caller()
        let status = input.query.status.map(SingleRequest.Status.init)
        let page = PageRequest(limit: input.query.limit, cursor: input.query.cursor)
        let requests = try await services.singleRequests.list(for: principal, status: status, page: page, logger: logger)
        return .ok(.init(body: .json(.init(items: requests.items.map(Components.Schemas.SingleRequest.init), nextCursor: requests.next?.text))))
    }

    func getSingleRequest(_ input: Operations.GetSingleRequest.Input) async throws -> Operations.GetSingleRequest.Output {
        let principal = try await caller()
        let request = try await services.singleRequests.request(id: try requestID(input.path.id), for: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    func acceptSingleRequest(_ input: Operations.AcceptSingleRequest.Input) async throws -> Operations.AcceptSingleRequest.Output {
        let principal = try await caller()
        var narrowing = GrantNarrowing.everything
        if case .json(let body) = input.body {
            narrowing = GrantNarrowing(
                types: body.types, windowFrom: body.window?.from, windowTo: body.window?.to, subscriptionDays: body.subscription?.days)
        }
        let request = try await services.singleRequests.accept(
            id: try requestID(input.path.id), granting: narrowing, by: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    func refuseSingleRequest(_ input: Operations.RefuseSingleRequest.Input) async throws -> Operations.RefuseSingleRequest.Output {
        let principal = try await caller()
        let request = try await services.singleRequests.refuse(id: try requestID(input.path.id), by: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    func cancelSingleRequest(_ input: Operations.CancelSingleRequest.Input) async throws -> Operations.CancelSingleRequest.Output {
        let principal = try await caller()
        let request = try await services.singleRequests.cancel(id: try requestID(input.path.id), by: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    func endSingleRequestSubscription(_ input: Operations.EndSingleRequestSubscription.Input) async throws
        -> Operations.EndSingleRequestSubscription.Output
    {
        let principal = try await caller()
        let request = try await services.singleRequests.endSubscription(id: try requestID(input.path.id), by: principal, logger: logger)
        return .ok(.init(body: .json(.init(request))))
    }

    /// Never reached: `StreamingEndpoints` serves this path so rows stream instead of being collected
    /// into the generated (in-memory) body type. Kept because the generated protocol requires it.
    func downloadSingleRequestData(_ input: Operations.DownloadSingleRequestData.Input) async throws
        -> Operations.DownloadSingleRequestData.Output
    {
        throw Problem.status(.internalServerError, detail: "Downloads are served by the streaming endpoint.")
    }

    func downloadSingleRequestPositions(_ input: Operations.DownloadSingleRequestPositions.Input) async throws
        -> Operations.DownloadSingleRequestPositions.Output
    {
        throw Problem.status(.internalServerError, detail: "Downloads are served by the streaming endpoint.")
    }

    /// A malformed id cannot name anyone's request: the same 404 as a request that is not the caller's.
    func requestID(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw SingleRequestError.notFound }
        return id
    }
}

extension Components.Schemas.SingleRequest {
    init(_ request: SingleRequest) {
        self.init(
            id: request.id.uuidString.lowercased(),
            thirdParty: .init(request.thirdParty),
            subject: .init(email: request.subject.email, fiscalCode: request.subject.fiscalCode),
            types: request.asked.types.map(Components.Schemas.RequestedType.init),
            purpose: request.purpose,
            window: .init(from: request.asked.windowFrom, to: request.asked.windowTo),
            status: .init(request.status),
            createdAt: request.createdAt,
            decidedAt: request.decidedAt,
            subscription: request.subscription.map {
                .init(
                    days: $0.days, status: .init($0.status), endsAt: $0.endsAt,
                    endedAt: $0.endedAt, endedBy: $0.endedBy.map(Components.Schemas.Subscription.EndedByPayload.init))
            },
            grant: request.grant.map(Components.Schemas.Grant.init),
            expiresAt: request.expiresAt,
            purposeCode: .init(request.purposeCode))
    }
}

extension Components.Schemas.ThirdPartyReference {
    init(_ thirdParty: SingleRequest.ThirdParty) {
        self.init(id: thirdParty.id.uuidString.lowercased(), companyName: thirdParty.companyName, vatNumber: thirdParty.vatNumber)
    }
}

extension Components.Schemas.Grant {
    init(_ grant: ConsentGrant) {
        self.init(
            id: grant.id.uuidString.lowercased(), grantedAt: grant.grantedAt,
            types: grant.terms.types.map(Components.Schemas.RequestedType.init),
            window: .init(from: grant.terms.windowFrom, to: grant.terms.windowTo), subscriptionDays: grant.terms.subscriptionDays,
            narrowed: grant.narrowed)
    }
}
