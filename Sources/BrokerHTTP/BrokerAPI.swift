import BrokerDomain
import BrokerOpenAPI
import Foundation
import Logging
import OpenAPIRuntime
import Prometheus

/// The implementation of the generated `APIProtocol`; one extension file per area of the contract.
struct BrokerAPI: APIProtocol {
    let accounts: AccountService
    let samples: SampleService
    let positions: PositionService
    let singleRequests: SingleRequestService
    let transparency: TransparencyService
    let groupRequests: GroupRequestService
    let auditTrail: AuditTrail
    let auditCheckpoints: AuditCheckpoints
    let imports: ImportJobs
    let readiness: Readiness
    let metrics: PrometheusCollectorRegistry
    /// Only a scraper with `METRICS_TOKEN` reads `metrics`.
    let metricsAccess: MetricsAccess
    let webhooks: WebhookService
    let runs: RunService
    let liveFeeds: RunLiveFeeds
    /// The rate-limited operations and downloads, shared with the console.
    let budgeted: BudgetedOperations

    /// The parts of the server the API's handlers call.
    init(_ services: Services, metrics: PrometheusCollectorRegistry, budgeted: BudgetedOperations) {
        accounts = services.accounts
        samples = services.samples
        positions = services.positions
        singleRequests = services.singleRequests
        transparency = services.transparency
        groupRequests = services.groupRequests
        auditTrail = services.auditTrail
        auditCheckpoints = services.auditCheckpoints
        imports = services.imports
        readiness = services.readiness
        self.metrics = metrics
        metricsAccess = services.metricsAccess
        webhooks = services.webhooks
        runs = services.runs
        liveFeeds = services.liveFeeds
        self.budgeted = budgeted
    }

    var logger: Logger { RequestScope.current.logger }

    /// The authenticated caller, or 401. Whether their role may do what they ask is the service's to say
    /// (`WrongRole`, 403), for the API and the console alike.
    func caller() async throws -> Principal {
        if let principal = RequestScope.current.principal { return principal }
        guard let token = RequestScope.current.bearerToken,
            let principal = try await accounts.principal(bearer: token, logger: logger)
        else { throw AccountError.unauthenticated }
        return principal
    }

}

extension Components.Schemas.Account {
    init(_ account: Account) throws {
        self.init(
            id: account.id.uuidString.lowercased(),
            role: .init(account.role),
            email: account.email,
            status: .init(account.status),
            createdAt: account.createdAt,
            activatedAt: account.activatedAt)
        switch account.profile {
        case .user(let fullName, let fiscalCode, let birthDate, let sex, let timeZone):
            self.timeZone = timeZone
            self.fullName = fullName
            self.fiscalCode = fiscalCode
            self.birthDate = birthDate
            self.sex = try .init(stored: sex)
        case .thirdParty(let companyName, let vatNumber, let description):
            self.companyName = companyName
            self.vatNumber = vatNumber
            self.description = description
        case .auditor:
            break
        }
    }
}
