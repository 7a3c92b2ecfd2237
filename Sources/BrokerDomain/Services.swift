import Foundation
import Logging
import PostgresNIO

/// What the server is made of: the database and every capability's service, built once by the composition
/// root (`BrokerServer`'s `Services.make(configuration:logger:noise:)`). This is the one list of them: the
/// API (`BrokerAPI`) and the console (`ConsoleServices`) hold it and read each service through it, and the
/// background work (`Services.background`) is built from it. A service that needs another is handed it when built (accounts get single requests, for
/// erasure; checkpoints get the audit trail); only a service's private parts, such as the accounts' login
/// throttle, are built inside it.
package struct Services: Sendable {
    /// `DATABASE_URL`, parsed once: the pool's and the watchdog's connections are made from it.
    package let databaseURL: DatabaseURL
    package let client: DatabasePool
    package let availability: DatabaseAvailability
    package let metricsAccess: MetricsAccess
    package let readiness: Readiness
    package let accounts: AccountService
    /// Where every mail is written; the delivery loop (`Services.background`) sends them.
    package let mailOutbox: MailOutbox
    package let samples: SampleService
    package let positions: PositionService
    package let peers: PeerStatistics
    package let singleRequests: SingleRequestService
    /// The signed receipts of grants and their ends (issued by `singleRequests`, which holds the same one).
    package let consentReceipts: ConsentReceipts
    package let transparency: TransparencyService
    package let sharing: SharingService
    package let groupRequests: GroupRequestService
    package let auditTrail: AuditTrail
    package let auditCheckpoints: AuditCheckpoints
    package let imports: ImportJobs
    package let webhooks: WebhookService
    package let webhookPolicy: WebhookURLPolicy
    package let runs: RunService
    /// The spectators' live feeds: one reader per watched run.
    package let liveFeeds: RunLiveFeeds
    /// Companies' FHIR bulk exports; the planner (`Services.background`) fixes their files.
    package let bulkExports: BulkExportService
    /// The per-account budgets of the expensive operations (charged by `BudgetedOperations`), shared by every
    /// instance through the database; account housekeeping deletes their full buckets.
    package let rateLimiter: RateLimiter

    package init(
        databaseURL: DatabaseURL,
        client: DatabasePool,
        availability: DatabaseAvailability,
        metricsAccess: MetricsAccess,
        readiness: Readiness,
        accounts: AccountService,
        mailOutbox: MailOutbox,
        samples: SampleService,
        positions: PositionService,
        peers: PeerStatistics,
        singleRequests: SingleRequestService,
        consentReceipts: ConsentReceipts,
        transparency: TransparencyService,
        sharing: SharingService,
        groupRequests: GroupRequestService,
        auditTrail: AuditTrail,
        auditCheckpoints: AuditCheckpoints,
        imports: ImportJobs,
        webhooks: WebhookService,
        webhookPolicy: WebhookURLPolicy,
        runs: RunService,
        liveFeeds: RunLiveFeeds,
        bulkExports: BulkExportService,
        rateLimiter: RateLimiter
    ) {
        self.databaseURL = databaseURL
        self.client = client
        self.availability = availability
        self.metricsAccess = metricsAccess
        self.readiness = readiness
        self.accounts = accounts
        self.mailOutbox = mailOutbox
        self.samples = samples
        self.positions = positions
        self.peers = peers
        self.singleRequests = singleRequests
        self.consentReceipts = consentReceipts
        self.transparency = transparency
        self.sharing = sharing
        self.groupRequests = groupRequests
        self.auditTrail = auditTrail
        self.auditCheckpoints = auditCheckpoints
        self.imports = imports
        self.webhooks = webhooks
        self.webhookPolicy = webhookPolicy
        self.runs = runs
        self.liveFeeds = liveFeeds
        self.bulkExports = bulkExports
        self.rateLimiter = rateLimiter
    }
}
