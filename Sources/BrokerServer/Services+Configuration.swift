import BrokerDomain
import BrokerHTTP
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

extension Services {
    /// Builds every service from the configuration (`buildApplication` is the only caller).
    static func make(configuration: BrokerConfiguration, logger: Logger, noise: any NoiseSource) async throws -> Services {
        let databaseURL = try DatabaseURL(configuration.databaseURL, severalHosts: .readWrite)
        // Of several hosts, the one that will do now; if none answers yet, the first, and the watchdog moves
        // the pool when one does (the server starts, and answers 503, while its database is down).
        let client = DatabasePool(
            url: databaseURL, host: await HostSelection(url: databaseURL, logger: logger).select(), limits: configuration.database, logger: logger)
        let availability = DatabaseAvailability()
        let metricsAccess = MetricsAccess(token: configuration.metricsToken)
        let readiness = Readiness(client: client, migrations: try Migration.bundled(), availability: availability)
        let pseudonymizer = Pseudonymizer(client: client)
        let consentReceipts = ConsentReceipts(
            client: client, key: configuration.consentSigningKey, issuer: configuration.publicURL, clock: configuration.clock)
        if configuration.consentSigningKey == nil {
            logger.warning(
                "consent receipts are off: set CONSENT_SIGNING_KEY_FILE (`d4h consent keygen FILE`) so that every grant and its end yield a signed receipt"
            )
        }
        let mailOutbox = MailOutbox(client: client, publicURL: configuration.publicURL)
        let reads = try await reads(configuration: configuration, primary: client, logger: logger)
        let singleRequests = SingleRequestService(
            client: client, pseudonymizer: pseudonymizer, pendingExpiryDays: configuration.pendingRequestExpiryDays,
            clock: configuration.clock, receipts: consentReceipts, outbox: mailOutbox, reads: reads)
        let accounts = try await AccountService(
            client: client, hasher: PasswordHasher(parameters: configuration.passwordHashing), outbox: mailOutbox,
            publicURL: configuration.publicURL, sessionTTL: configuration.sessionTTL, pseudonymizer: pseudonymizer,
            singleRequests: singleRequests, loginThrottle: configuration.loginThrottle,
            unactivatedLifetime: configuration.activationExpiryHours * 3600, clock: configuration.clock)
        let peers = PeerStatistics(
            client: client, mechanism: CellMechanism(noise: noise, minimumPeople: configuration.groupMinCohort), settings: configuration.privacy,
            reads: reads)
        let samples = SampleService(client: client, peers: peers, pseudonymizer: pseudonymizer, clock: configuration.clock)
        let positions = PositionService(client: client, clock: configuration.clock)
        let transparency = TransparencyService(client: client, pseudonymizer: pseudonymizer)
        let sharing = SharingService(client: client, pseudonymizer: pseudonymizer)
        let groupRequests = GroupRequestService(
            client: client, minimumCohort: configuration.groupMinCohort, evaluations: configuration.evaluationSlots,
            privacy: configuration.privacy, noise: noise, clock: configuration.clock,
            reads: reads)
        let auditTrail = AuditTrail(client: client)
        let auditCheckpoints = AuditCheckpoints(
            client: client, trail: auditTrail, key: configuration.auditSigningKey, clock: configuration.clock)
        let imports = ImportJobs(
            importer: AppleHealthImport(client: client, clock: configuration.clock), backgroundBytes: configuration.importBackgroundBytes,
            maximumBackground: configuration.importSlots, logger: logger,
            failureOf: { error, logger in ImportJob.Failure(ProblemMiddleware.problem(for: error, logger: logger)) }, clock: configuration.clock)
        let webhookPolicy = WebhookURLPolicy(allowPrivate: configuration.webhookAllowPrivate)
        let webhooks = WebhookService(client: client, policy: webhookPolicy)
        let runs = RunService(client: client, singleRequests: singleRequests, outbox: mailOutbox, clock: configuration.clock)
        let liveFeeds = RunLiveFeeds(runs: runs, logger: logger)
        return Services(
            databaseURL: databaseURL,
            client: client,
            availability: availability,
            metricsAccess: metricsAccess,
            readiness: readiness,
            accounts: accounts,
            mailOutbox: mailOutbox,
            samples: samples,
            positions: positions,
            peers: peers,
            singleRequests: singleRequests,
            consentReceipts: consentReceipts,
            transparency: transparency,
            sharing: sharing,
            groupRequests: groupRequests,
            auditTrail: auditTrail,
            auditCheckpoints: auditCheckpoints,
            imports: imports,
            webhooks: webhooks,
            webhookPolicy: webhookPolicy,
            runs: runs,
            liveFeeds: liveFeeds,
            bulkExports: BulkExportService(
                client: client, singleRequests: singleRequests, publicURL: configuration.publicURL, timeToLive: configuration.bulkExportTTL,
                clock: configuration.clock),
            rateLimiter: RateLimiter(client: client, limits: configuration.rateLimits))
    }

    /// Where lagging reads go: `DATABASE_READ_URL`'s standby, measured against the primary, or the primary.
    private static func reads(configuration: BrokerConfiguration, primary: DatabasePool, logger: Logger) async throws -> DatabaseReads {
        guard let text = configuration.databaseReadURL else { return DatabaseReads(primary: primary) }
        let url = try DatabaseURL(text, variable: "DATABASE_READ_URL", severalHosts: .preferStandby)
        let replica = DatabasePool(
            url: url, host: await HostSelection(url: url, logger: logger).select(), limits: configuration.database, logger: logger)
        let staleness = ReplicaStaleness(
            primary: primary, replica: replica, replicaURL: url, bound: configuration.databaseReadMaxStaleness, logger: logger)
        return DatabaseReads(primary: primary, replica: replica, staleness: staleness)
    }

    /// The work that runs beside the HTTP server, started in this order and stopped in the reverse one.
    func background(configuration: BrokerConfiguration, logger: Logger) throws -> [any Service] {
        [client] + groupRequests.reads.services + [
            SamplePartitionMaintenance(client: client, logger: logger, clock: configuration.clock),
            DatabaseWatchdog(url: databaseURL, pool: client, availability: availability, logger: logger),
            SubscriptionExpiry(requests: singleRequests, logger: logger),
            AccountHousekeeping(
                accounts: accounts, rateLimiter: rateLimiter, logger: logger, interval: configuration.accountHousekeepingInterval),
            GroupResultsRefresh(groupRequests: groupRequests, interval: configuration.groupResultsRefreshInterval, logger: logger),
            PeerStatisticsPublishing(
                peers: peers, interval: configuration.peerStatisticsInterval, logger: logger, clock: configuration.clock),
            AuditCheckpointPublishing(checkpoints: auditCheckpoints, interval: configuration.auditCheckpointInterval, logger: logger),
            WebhookDelivery(
                client: client, policy: webhookPolicy, configuration: configuration.webhookDelivery, logger: logger, clock: configuration.clock),
            RunDay(runs: runs, logger: logger, interval: configuration.runDayInterval),
            NotificationSweep(
                requests: singleRequests, digest: WeeklyDigest(client: client, outbox: mailOutbox, clock: configuration.clock), logger: logger,
                interval: configuration.notificationInterval),
            MailDelivery(
                client: client, mailer: try makeMailer(configuration: configuration, logger: logger), configuration: configuration.mailDelivery,
                logger: logger),
            BulkExportPlanner(client: client, interval: configuration.bulkExportPlanningInterval, clock: configuration.clock, logger: logger),
            // After the pool, so it stops before it: a cancelled import still records its failure.
            imports,
        ]
    }
}
