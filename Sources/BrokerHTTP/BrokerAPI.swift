import BrokerDomain
import BrokerOpenAPI
import Foundation
import Logging
import OpenAPIRuntime
import Prometheus

/// The implementation of the generated `APIProtocol`; one extension file per area of the contract.
@dynamicMemberLookup
struct BrokerAPI: APIProtocol {
    /// The domain's services, as the composition root built them (the one list of them is `Services`).
    let services: Services
    let metrics: PrometheusCollectorRegistry
    /// The rate-limited operations and downloads, shared with the console.
    let budgeted: BudgetedOperations

    init(_ services: Services, metrics: PrometheusCollectorRegistry, budgeted: BudgetedOperations) {
        self.services = services
        self.metrics = metrics
        self.budgeted = budgeted
    }

    /// `api.accounts` and the like, for the streaming endpoints: each service as `Services` holds it.
    subscript<Service>(dynamicMember keyPath: KeyPath<Services, Service>) -> Service {
        services[keyPath: keyPath]
    }

    var logger: Logger { RequestScope.current.logger }

    /// The authenticated caller, or 401. Whether their role may do what they ask is the service's to say
    /// (`WrongRole`, 403), for the API and the console alike.
    func caller() async throws -> Principal {
        if let principal = RequestScope.current.principal { return principal }
        guard let token = RequestScope.current.bearerToken,
            let principal = try await services.accounts.principal(bearer: token, logger: logger)
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
            activatedAt: account.activatedAt,
            language: .init(account.language))
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
