import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func getMyPrivacyLoss(_ input: Operations.GetMyPrivacyLoss.Input) async throws -> Operations.GetMyPrivacyLoss.Output {
        let loss = try await services.personPrivacy.loss(of: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(loss))))
    }
}
