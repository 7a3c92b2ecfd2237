import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func getAccessLog(_ input: Operations.GetAccessLog.Input) async throws -> Operations.GetAccessLog.Output {
        let principal = try await caller()
        let page = PageRequest(limit: input.query.limit, cursor: input.query.cursor)
        let entries = try await services.transparency.accessLog(for: principal, page: page, logger: logger)
        return .ok(.init(body: .json(.init(items: entries.items.map(Components.Schemas.AccessLogEntry.init), nextCursor: entries.next?.text))))
    }

    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output {
        let blocks = try await services.transparency.blocks(of: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(items: blocks.map(Components.Schemas.Block.init)))))
    }

    func blockThirdParty(_ input: Operations.BlockThirdParty.Input) async throws -> Operations.BlockThirdParty.Output {
        let principal = try await caller()
        guard let id = UUID(uuidString: input.path.thirdPartyId) else { throw TransparencyError.companyNotFound }
        let block = try await services.transparency.block(id, by: principal, requests: services.singleRequests, logger: logger)
        return .ok(.init(body: .json(.init(block))))
    }

    func unblockThirdParty(_ input: Operations.UnblockThirdParty.Input) async throws -> Operations.UnblockThirdParty.Output {
        let principal = try await caller()
        guard let id = UUID(uuidString: input.path.thirdPartyId) else { throw TransparencyError.notBlocked }
        try await services.transparency.unblock(id, by: principal, logger: logger)
        return .noContent(.init())
    }
}

extension Components.Schemas.AccessLogEntry {
    init(_ entry: AccessLogEntry) {
        var thirdParty: ThirdPartyPayload?
        if let id = entry.thirdPartyID, let name = entry.companyName { thirdParty = .init(id: id.uuidString.lowercased(), companyName: name) }
        self.init(
            at: entry.at,
            thirdParty: thirdParty,
            requestId: entry.requestID?.uuidString.lowercased(),
            kind: .init(entry.kind),
            types: entry.types.map(Components.Schemas.RequestedType.init),
            samples: entry.samples.map(Int.init),
            from: entry.correctedFrom,
            to: entry.correctedTo,
            description: entry.description,
            grantId: entry.grantID?.uuidString.lowercased())
    }
}

extension Components.Schemas.Block {
    init(_ block: Block) {
        self.init(thirdParty: .init(block.thirdParty), blockedAt: block.blockedAt)
    }
}
