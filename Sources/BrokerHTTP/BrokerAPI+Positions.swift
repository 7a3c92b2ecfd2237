import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func uploadPositions(_ input: Operations.UploadPositions.Input) async throws -> Operations.UploadPositions.Output {
        let principal = try await caller()
        let result: (accepted: Int, duplicates: Int)
        switch input.body {
        case .json(let upload):
            let entries = upload.positions.map {
                PositionBatch.Entry(at: $0.at, latitude: $0.latitude, longitude: $0.longitude, elevation: $0.elevation, accuracy: $0.accuracy)
            }
            result = try await budgeted.storePositions(entries, by: principal, logger: logger)
        case .csv(let body):
            result = try await budgeted.storePositions(csv: body, by: principal, logger: logger)
        }
        return .ok(.init(body: .json(.init(accepted: result.accepted, duplicates: result.duplicates))))
    }

    func listPositions(_ input: Operations.ListPositions.Input) async throws -> Operations.ListPositions.Output {
        let principal = try await caller()
        let page = try await services.positions.list(
            principal, from: input.query.from, to: input.query.to, page: PageRequest(limit: input.query.limit, cursor: input.query.cursor),
            logger: logger)
        return .ok(.init(body: .json(.init(items: page.items.map(Components.Schemas.Position.init), nextCursor: page.next?.text))))
    }
}

extension Components.Schemas.Position {
    init(_ position: BrokerDomain.Position) {
        self.init(
            at: position.at, latitude: position.latitude, longitude: position.longitude, elevation: position.elevation,
            accuracy: position.accuracy)
    }
}
