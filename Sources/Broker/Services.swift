import Foundation
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle

/// What the server is made of, built once from its configuration (`buildApplication` is the only caller).
/// Each consumer is handed the parts it uses: the API (`BrokerAPI(_:)`), the console (`ConsoleServices(_:)`),
/// the streaming endpoints, and the background work (`background(configuration:logger:)`). A service that
/// needs another is handed it here (accounts get single requests, for erasure; checkpoints get the audit
/// trail); only a service's private parts, such as the accounts' login throttle, are built inside it.
struct Services: Sendable {
    /// `DATABASE_URL`, parsed once: the pool's and the watchdog's connections are made from it.
    let databaseURL: DatabaseURL
    let client: DatabasePool
    let availability: DatabaseAvailability
    let metrics: PrometheusCollectorRegistry
    let metricsAccess: MetricsAccess
    let readiness: Readiness
    let accounts: AccountService
    let samples: SampleService
    let positions: PositionService
    let peers: PeerStatistics
    let singleRequests: SingleRequestService
    let transparency: TransparencyService
    let groupRequests: GroupRequestService
    let auditTrail: AuditTrail
    let auditCheckpoints: AuditCheckpoints
    let imports: ImportJobs
    let webhooks: WebhookService
    let webhookPolicy: WebhookURLPolicy
    let runs: RunService
    /// The spectators' live feeds: one reader per watched run.
    let liveFeeds: RunLiveFeeds
    /// The rate-limited operations and downloads, as the API and the console both call them.
    let budgeted: BudgetedOperations

    init(configuration: BrokerConfiguration, logger: Logger, noise: any NoiseSource) async throws {
        databaseURL = try DatabaseURL(configuration.databaseURL)
        client = DatabasePool(
            client: PostgresClient(configuration: databaseURL.clientConfiguration(limits: configuration.database), backgroundLogger: logger),
            leaseTimeout: configuration.database.leaseTimeout, logger: logger)
        availability = DatabaseAvailability()
        metrics = PrometheusCollectorRegistry()
        metricsAccess = MetricsAccess(token: configuration.metricsToken)
        readiness = Readiness(client: client, migrations: try Migration.bundled(), availability: availability)
        let pseudonymizer = Pseudonymizer(client: client)
        singleRequests = SingleRequestService(
            client: client, pseudonymizer: pseudonymizer, pendingExpiryDays: configuration.pendingRequestExpiryDays)
        let mailer = try makeMailer(configuration: configuration, logger: logger)
        accounts = try await AccountService(
            client: client, hasher: PasswordHasher(), mailer: mailer,
            publicURL: configuration.publicURL, sessionTTL: configuration.sessionTTL, pseudonymizer: pseudonymizer,
            singleRequests: singleRequests, loginThrottle: configuration.loginThrottle,
            unactivatedLifetime: configuration.activationExpiryHours * 3600, clock: configuration.clock)
        peers = PeerStatistics(
            client: client, mechanism: CellMechanism(noise: noise, minimumPeople: configuration.groupMinCohort), settings: configuration.privacy)
        samples = SampleService(client: client, peers: peers)
        positions = PositionService(client: client)
        transparency = TransparencyService(client: client, pseudonymizer: pseudonymizer)
        groupRequests = GroupRequestService(
            client: client, minimumCohort: configuration.groupMinCohort, evaluations: configuration.evaluationSlots,
            privacy: configuration.privacy, noise: noise)
        auditTrail = AuditTrail(client: client)
        auditCheckpoints = AuditCheckpoints(client: client, trail: auditTrail, key: configuration.auditSigningKey)
        imports = ImportJobs(
            importer: AppleHealthImport(client: client), backgroundBytes: configuration.importBackgroundBytes,
            maximumBackground: configuration.importSlots, logger: logger)
        webhookPolicy = WebhookURLPolicy(allowPrivate: configuration.webhookAllowPrivate)
        webhooks = WebhookService(client: client, policy: webhookPolicy)
        runs = RunService(client: client, singleRequests: singleRequests, mailer: mailer)
        liveFeeds = RunLiveFeeds(runs: runs, logger: logger)
        budgeted = BudgetedOperations(
            rateLimiter: RateLimiter(limits: configuration.rateLimits), accounts: accounts, samples: samples, positions: positions,
            imports: imports,
            singleRequests: singleRequests, groupRequests: groupRequests, auditTrail: auditTrail,
            streamStallTimeout: .seconds(configuration.downloadStallTimeout))
    }

    /// The work that runs beside the HTTP server, started in this order and stopped in the reverse one.
    func background(configuration: BrokerConfiguration, logger: Logger) throws -> [any Service] {
        [
            client, SamplePartitionMaintenance(client: client, logger: logger),
            DatabaseWatchdog(
                configuration: try databaseURL.connectionConfiguration(), availability: availability, logger: logger),
            SubscriptionExpiry(requests: singleRequests, logger: logger),
            AccountHousekeeping(accounts: accounts, logger: logger, interval: configuration.accountHousekeepingInterval),
            GroupResultsRefresh(groupRequests: groupRequests, interval: configuration.groupResultsRefreshInterval, logger: logger),
            PeerStatisticsPublishing(peers: peers, interval: configuration.peerStatisticsInterval, logger: logger),
            AuditCheckpointPublishing(checkpoints: auditCheckpoints, interval: configuration.auditCheckpointInterval, logger: logger),
            WebhookDelivery(client: client, policy: webhookPolicy, configuration: configuration.webhookDelivery, logger: logger),
            RunDay(runs: runs, logger: logger, interval: configuration.runDayInterval),
            // After the pool, so it stops before it: a cancelled import still records its failure.
            imports,
        ]
    }
}
