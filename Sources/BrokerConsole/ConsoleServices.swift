import BrokerDomain
import BrokerHTTP

/// What the console uses of the server: the domain's services (read through to `Services`, so the list of
/// them is written once) and the API's budgeted operations, never the API itself, so a page cannot drift
/// from the API's rules.
@dynamicMemberLookup
package struct ConsoleServices: Sendable {
    let services: Services
    let budgeted: BudgetedOperations
    /// The console's own table: the CSRF tokens of its forms.
    let csrf: CSRFTokens

    package init(_ services: Services, budgeted: BudgetedOperations) {
        self.services = services
        self.budgeted = budgeted
        csrf = CSRFTokens(client: services.client)
    }

    /// `request.services.accounts` and the like: each service as `Services` holds it.
    package subscript<Service>(dynamicMember keyPath: KeyPath<Services, Service>) -> Service {
        services[keyPath: keyPath]
    }
}
