import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func getSharing(_ input: Operations.GetSharing.Input) async throws -> Operations.GetSharing.Output {
        let preferences = try await services.sharing.preferences(of: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(preferences))))
    }

    func setSharing(_ input: Operations.SetSharing.Input) async throws -> Operations.SetSharing.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let preferences = try await services.sharing.update(body.types.map(SharingPreferences.Change.init), by: principal, logger: logger)
        return .ok(.init(body: .json(.init(preferences))))
    }
}
