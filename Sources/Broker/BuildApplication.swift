import Configuration
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import OpenAPIHummingbird
import PostgresNIO
import Prometheus

/// The JSON body limit of the contract; import endpoints raise it for themselves.
let jsonBodyLimit = 16 * 1024 * 1024
/// The import limit of the contract (an iPhone's export.zip).
let importBodyLimit = 512 * 1024 * 1024

/// The one composition root: `d4h serve` and the tests build the service through this function.
package func buildApplication(configuration: BrokerConfiguration, logger baseLogger: Logger? = nil) async throws
    -> some ApplicationProtocol
{
    try await buildApplication(configuration: configuration, logger: baseLogger, noise: SecureNoise())
}

/// The same, with the privacy module's noise injected: tests only (a running server always draws from
/// the system's CSPRNG, and no setting changes that).
func buildApplication(configuration: BrokerConfiguration, logger baseLogger: Logger? = nil, noise: any NoiseSource) async throws
    -> some ApplicationProtocol
{
    var logger = baseLogger ?? Logger(label: "data4help")
    logger.logLevel = configuration.logLevel
    let databaseURL = try DatabaseURL(configuration.databaseURL)
    let client = DatabasePool(
        client: PostgresClient(configuration: databaseURL.clientConfiguration(limits: configuration.database), backgroundLogger: logger),
        leaseTimeout: configuration.database.leaseTimeout, logger: logger)
    let mailer = try makeMailer(configuration: configuration, logger: logger)
    let pseudonymizer = Pseudonymizer(client: client)
    let singleRequests = SingleRequestService(
        client: client, pseudonymizer: pseudonymizer, pendingExpiryDays: configuration.pendingRequestExpiryDays)
    let accountService = try await AccountService(
        client: client, hasher: PasswordHasher(), mailer: mailer, publicURL: configuration.publicURL,
        sessionTTL: configuration.sessionTTL, pseudonymizer: pseudonymizer, singleRequests: singleRequests,
        loginThrottle: configuration.loginThrottle, unactivatedLifetime: configuration.activationExpiryHours * 3600)
    let registry = PrometheusCollectorRegistry()
    let availability = DatabaseAvailability()
    let webhookPolicy = WebhookURLPolicy(allowPrivate: configuration.webhookAllowPrivate)
    let importJobs = ImportJobs(
        importer: AppleHealthImport(client: client), backgroundBytes: configuration.importBackgroundBytes,
        maximumBackground: configuration.importSlots, logger: logger)
    let peers = PeerStatistics(
        client: client, mechanism: CellMechanism(noise: noise, minimumPeople: configuration.groupMinCohort), settings: configuration.privacy)
    let api = BrokerAPI(
        accounts: accountService,
        samples: SampleService(client: client, peers: peers),
        singleRequests: singleRequests,
        transparency: TransparencyService(client: client, pseudonymizer: pseudonymizer),
        groupRequests: GroupRequestService(
            client: client, minimumCohort: configuration.groupMinCohort, evaluations: configuration.evaluationSlots,
            privacy: configuration.privacy, noise: noise),
        auditTrail: AuditTrail(client: client),
        auditCheckpoints: AuditCheckpoints(client: client, key: configuration.auditSigningKey),
        imports: importJobs,
        readiness: Readiness(client: client, migrations: try Migration.bundled(), availability: availability),
        metrics: registry,
        metricsAccess: MetricsAccess(token: configuration.metricsToken),
        webhooks: WebhookService(client: client, policy: webhookPolicy),
        rateLimiter: RateLimiter(limits: configuration.rateLimits),
        streamStallTimeout: .seconds(configuration.downloadStallTimeout))

    let router = Router(context: BrokerRequestContext.self)
    router.middlewares.add(HTTPMetricsMiddleware(registry: registry))
    router.middlewares.add(SecurityHeadersMiddleware(servesTLS: configuration.tls != nil))
    router.middlewares.add(ProblemMiddleware())
    router.middlewares.add(LocationHeaderMiddleware())
    router.middlewares.add(RequestScopeMiddleware(trustedProxies: configuration.trustedProxies))
    router.middlewares.add(DatabaseAvailabilityMiddleware(availability: availability))
    router.middlewares.add(
        RequestBodyLimitMiddleware(
            defaultLimit: jsonBodyLimit, limits: ["/v1/me/imports/": importBodyLimit, "/data/upload": importBodyLimit]))
    let transport = RouteRecordingTransport(
        router: router, replacements: StreamingEndpoints(api: api).handlers, gate: AuthenticationGate(accounts: accountService),
        outageGuard: OutageGuard(availability: availability))
    // Compact JSON (the generator's default pretty-prints): smaller, and a line-oriented script can read it.
    try api.registerHandlers(
        on: transport, configuration: .init(dateTranscoder: RFC3339DateTranscoder(), jsonEncodingOptions: [.sortedKeys]))
    transport.registerMethodNotAllowed()
    try await Console.load(
        api: api, servesTLS: configuration.tls != nil, publicURL: configuration.publicURL, sessionTTL: configuration.sessionTTL
    ).register(on: router)

    // Read now, so a wrong path or a mismatched key stops the start with a message naming the variable.
    let http1 = HTTP1Channel.Configuration(idleTimeout: .seconds(Int64(configuration.httpIdleTimeout)))
    let server: HTTPServerBuilder =
        try configuration.tls.map {
            try .tls(.http1(configuration: http1), tlsConfiguration: $0.serverConfiguration())
        } ?? .http1(configuration: http1)
    return Application(
        router: router,
        server: server,
        configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: nil),
        services: [
            client, SamplePartitionMaintenance(client: client, logger: logger),
            DatabaseWatchdog(configuration: try databaseURL.connectionConfiguration(), availability: availability, logger: logger),
            SubscriptionExpiry(requests: singleRequests, logger: logger),
            AccountHousekeeping(accounts: accountService, logger: logger, interval: configuration.accountHousekeepingInterval),
            GroupResultsRefresh(groupRequests: api.groupRequests, interval: configuration.groupResultsRefreshInterval, logger: logger),
            PeerStatisticsPublishing(peers: peers, interval: configuration.peerStatisticsInterval, logger: logger),
            AuditCheckpointPublishing(checkpoints: api.auditCheckpoints, interval: configuration.auditCheckpointInterval, logger: logger),
            WebhookDelivery(client: client, policy: webhookPolicy, configuration: configuration.webhookDelivery, logger: logger),
            // After the pool, so it stops before it: a cancelled import still records its failure.
            importJobs,
        ],
        logger: logger)
}

/// The mail transport `MAIL_TRANSPORT` names.
package func makeMailer(configuration: BrokerConfiguration, logger: Logger) throws -> any Mailer {
    let sender = "no-reply@" + (URL(string: configuration.publicURL)?.host ?? "data4help.example")
    switch configuration.mailTransport {
    case .file:
        guard let directory = configuration.mailDirectory else { throw ConfigurationError.missing("MAIL_DIRECTORY") }
        return FileMailer(directory: URL(fileURLWithPath: directory), sender: sender)
    case .sendmail:
        return SendmailMailer(sender: sender)
    case .log:
        return LogMailer(logger: logger)
    }
}
