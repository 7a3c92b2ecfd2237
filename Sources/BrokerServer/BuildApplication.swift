import BrokerConsole
import BrokerDomain
import BrokerHTTP
import Configuration
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import OpenAPIHummingbird
import PostgresNIO
import Prometheus

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
    let services = try await Services.make(configuration: configuration, logger: logger, noise: noise)
    let metrics = PrometheusCollectorRegistry()
    // The rate-limited operations and downloads, as the API and the console both call them (one limiter).
    let budgeted = BudgetedOperations(
        rateLimiter: services.rateLimiter, accounts: services.accounts, samples: services.samples,
        positions: services.positions,
        imports: services.imports,
        singleRequests: services.singleRequests, groupRequests: services.groupRequests, auditTrail: services.auditTrail,
        streamStallTimeout: .seconds(configuration.downloadStallTimeout), spoolDirectory: configuration.uploadSpoolDirectory)
    let router = try await buildRouter(services, metrics: metrics, budgeted: budgeted, configuration: configuration)
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
        services: try services.background(configuration: configuration, logger: logger),
        logger: logger)
}

/// The HTTP side: middleware, the API's generated routes (with the streaming ones replaced), the console.
func buildRouter(
    _ services: Services, metrics: PrometheusCollectorRegistry, budgeted: BudgetedOperations, configuration: BrokerConfiguration
) async throws -> Router<BrokerRequestContext> {
    let router = Router(context: BrokerRequestContext.self)
    router.middlewares.add(HTTPMetricsMiddleware(registry: metrics))
    router.middlewares.add(SecurityHeadersMiddleware(servesTLS: configuration.tls != nil))
    router.middlewares.add(ProblemMiddleware())
    router.middlewares.add(LocationHeaderMiddleware())
    router.middlewares.add(RequestScopeMiddleware(trustedProxies: configuration.trustedProxies))
    router.middlewares.add(DatabaseAvailabilityMiddleware(availability: services.availability))
    router.middlewares.add(
        RequestBodyLimitMiddleware(
            defaultLimit: jsonBodyLimit, limits: ["/v1/me/imports/": importBodyLimit, "/data/upload": importBodyLimit],
            mediaTypeLimits: [.init(path: "/v1/me/samples", mediaType: "application/fhir+json", limit: fhirBundleBodyLimit)]))
    try registerAPI(on: router, services: services, metrics: metrics, budgeted: budgeted)
    try await Console.load(
        ConsoleServices(services, budgeted: budgeted), servesTLS: configuration.tls != nil, publicURL: configuration.publicURL,
        sessionTTL: configuration.sessionTTL
    ).register(on: router)
    return router
}

/// The mail transport `MAIL_TRANSPORT` names.
package func makeMailer(configuration: BrokerConfiguration, logger: Logger) throws -> any Mailer {
    let sender = configuration.mailFrom ?? "no-reply@" + (URL(string: configuration.publicURL)?.host ?? "data4help.example")
    switch configuration.mailTransport {
    case .file:
        guard let directory = configuration.mailDirectory else { throw ConfigurationError.missing("MAIL_DIRECTORY") }
        return FileMailer(directory: URL(fileURLWithPath: directory), sender: sender)
    case .sendmail:
        return SendmailMailer(sender: sender, executable: configuration.mailProgram, timeout: configuration.mailProgramTimeout)
    case .smtp:
        guard let settings = configuration.smtp else { throw ConfigurationError.missing("SMTP_HOST") }
        do {
            return try SMTPMailer(settings: settings, sender: sender)
        } catch {
            throw ConfigurationError.invalid("SMTP_CA_FILE", "cannot be used as TLS trust roots (\(error))")
        }
    case .log:
        return LogMailer(logger: logger)
    }
}
