import BrokerDomain
import BrokerHTTP

/// What the console uses of the server: the API's own services and budgeted operations, never the API
/// itself, so a page cannot drift from the API's rules and the console depends on nothing it does not call.
package struct ConsoleServices: Sendable {
    let accounts: AccountService
    let samples: SampleService
    let singleRequests: SingleRequestService
    let transparency: TransparencyService
    let groupRequests: GroupRequestService
    let auditTrail: AuditTrail
    let auditCheckpoints: AuditCheckpoints
    let imports: ImportJobs
    let webhooks: WebhookService
    let budgeted: BudgetedOperations
    let runs: RunService
    /// The console's own table: the CSRF tokens of its forms.
    let csrf: CSRFTokens

    package init(_ services: Services, budgeted: BudgetedOperations) {
        accounts = services.accounts
        samples = services.samples
        singleRequests = services.singleRequests
        transparency = services.transparency
        groupRequests = services.groupRequests
        auditTrail = services.auditTrail
        auditCheckpoints = services.auditCheckpoints
        imports = services.imports
        webhooks = services.webhooks
        self.budgeted = budgeted
        runs = services.runs
        csrf = CSRFTokens(client: services.client)
    }
}
