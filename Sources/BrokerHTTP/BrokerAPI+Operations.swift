import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func getLiveness(_ input: Operations.GetLiveness.Input) async throws -> Operations.GetLiveness.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        switch await services.readiness.check(logger: logger) {
        case .ready(let version):
            return .ok(.init(body: .json(.init(status: .ready, schemaVersion: version))))
        case .databaseUnreachable:
            throw Problem(
                status: .serviceUnavailable, slug: "not-ready", title: "Not ready",
                detail: "The database is not reachable.")
        case .schemaNotCurrent(let why):
            throw Problem(status: .serviceUnavailable, slug: "not-ready", title: "Not ready", detail: why)
        }
    }

    func getMetrics(_ input: Operations.GetMetrics.Input) async throws -> Operations.GetMetrics.Output {
        try services.metricsAccess.admit(bearer: RequestScope.current.bearerToken)
        return .ok(.init(body: .plainText(HTTPBody(metrics.emitToString()))))
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws
        -> Operations.GetOpenAPIDocument.Output
    {
        .ok(.init(body: .yaml(HTTPBody(OpenAPIDocument.text))))
    }
}
