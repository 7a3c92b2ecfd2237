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
        // The outbox is shared by every instance: its counts are read from the database at each scrape, so
        // any instance reports the same pending and dead mails (an operator alerts on `dead` > 0).
        if let counts = try? await services.mailOutbox.counts(logger: logger) {
            for (status, count) in counts {
                metrics.makeGauge(name: "d4h_mail_outbox_mails", labels: [("status", status)]).set(Double(count))
            }
        }
        return .ok(.init(body: .plainText(HTTPBody(metrics.emitToString()))))
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws
        -> Operations.GetOpenAPIDocument.Output
    {
        .ok(.init(body: .yaml(HTTPBody(OpenAPIDocument.text))))
    }
}
