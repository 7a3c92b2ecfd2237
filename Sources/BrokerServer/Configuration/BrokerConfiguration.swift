import BrokerConsole
import BrokerDomain
import BrokerHTTP
import Configuration
import Foundation
import Logging

/// Everything the server reads from its environment (and the equivalent `d4h serve` flags).
package struct BrokerConfiguration: Sendable {
    package var databaseURL: String
    /// `DATABASE_READ_URL`: a standby (or several hosts, libpq's form) that a group request's first
    /// evaluation may read from while its data is at most `databaseReadMaxStaleness` old; nil: none.
    package var databaseReadURL: String?
    /// `DATABASE_READ_MAX_STALENESS` (seconds): how old the standby's data may be for reads to go there.
    package var databaseReadMaxStaleness: Duration = .seconds(5)
    package var httpHost: String
    package var httpPort: Int
    package var publicURL: String
    package var mailTransport: MailTransportKind
    package var mailDirectory: String?
    /// `MAIL_FROM`: the sender of every mail; nil is `no-reply@` the host of `PUBLIC_URL`. A relay usually takes
    /// only senders of domains verified with it.
    package var mailFrom: String?
    /// `MAIL_PROGRAM` (MAIL_TRANSPORT=sendmail): the program mails are piped to, `sendmail -t -i` style.
    package var mailProgram = "/usr/sbin/sendmail"
    /// `MAIL_PROGRAM_TIMEOUT`: how long the mail program may take before it is stopped and the send fails.
    package var mailProgramTimeout: Duration = .seconds(10)
    /// `SMTP_*` (MAIL_TRANSPORT=smtp): the mail server, its TLS and the account mail is submitted with.
    package var smtp: SMTPSettings?
    package var groupMinCohort: Int
    /// How often a live group subscription's results are recomputed to announce new figures
    /// (`GROUP_RESULTS_REFRESH_INTERVAL`, seconds; 0 turns it off). Nil is off.
    package var groupResultsRefreshInterval: Duration? = .seconds(3600)
    /// How often the background looks for closed months whose peer statistics are not yet published
    /// (`PEER_STATISTICS_INTERVAL`, seconds; 0 turns it off: requests then publish the months they need). Nil is off.
    package var peerStatisticsInterval: Duration? = .seconds(600)
    /// Lifetime of a session token, in seconds.
    package var sessionTTL: Int
    package var webhookAllowPrivate: Bool
    /// Delivery loop tuning; production defaults (tests shorten the intervals).
    package var webhookDelivery = WebhookDeliveryConfiguration()
    /// The mail delivery loop's tuning (`MAIL_SEND_TIMEOUT`, `MAIL_MAX_ATTEMPTS`, `MAIL_CONCURRENCY`).
    package var mailDelivery = MailDeliveryConfiguration()
    /// How often new requests, ending subscriptions and the weekly digest are turned into mails.
    package var notificationInterval: Duration = .seconds(10)
    package var logLevel: Logger.Level
    /// Seconds a connection may stay silent (no request, or a stalled one) before the server closes it:
    /// idle keep-alive connections cost a file descriptor each, and thousands of them are an attack.
    package var httpIdleTimeout = 60
    /// `DOWNLOAD_STALL_TIMEOUT`: seconds a streamed download, export or audit CSV waits for a client that
    /// takes no more of it before ending it (and recording what was sent). Shorter than the idle timeout:
    /// a client whose hang-up the server cannot see (its FIN arrived while the server waited on a zero
    /// window, and the kernel keeps that half-closed socket for `tcp_fin_timeout`, 60 s) is let go sooner.
    package var downloadStallTimeout = 20
    /// Where an uploaded Apple Health export is written before its import: the system's temporary directory
    /// (`TMPDIR`, else /tmp). A test points it at a full file system.
    package var uploadSpoolDirectory = FileManager.default.temporaryDirectory
    /// Serve HTTPS with these files (`TLS_CERTIFICATE`, `TLS_KEY`); nil serves plain HTTP (behind a proxy).
    package var tls: TLSFiles?
    /// Per-account limits of the expensive endpoints (`RATE_LIMIT_*`).
    package var rateLimits = RateLimits()
    /// `GROUP_EVALUATION_CONCURRENCY`: group evaluation steps (a cohort, or one type's cells) run at once;
    /// at most half the pool, so a burst of group requests leaves connections for everything else.
    package var groupEvaluationConcurrency = 2
    /// `GROUP_EVALUATION_QUEUE_TIMEOUT`: how long a group request waits for an evaluation slot before a 503.
    package var groupEvaluationQueueTimeout: Duration = .seconds(30)
    /// The pool's size and the bounds on every database wait (`DATABASE_POOL_*`, `DATABASE_*_TIMEOUT`).
    package var database = DatabaseLimits()
    /// `IMPORT_BACKGROUND_BYTES`: Apple Health uploads larger than this run as background jobs (202 and a
    /// status URL) instead of inside the request. 0 runs every import in the background.
    package var importBackgroundBytes: Int64 = 8 << 20
    /// Background imports running at once, server-wide; each holds one pooled connection for its whole length,
    /// so at most a quarter of the pool (at least one).
    package var importBackgroundConcurrency = 2
    /// The differential-privacy budget (`PRIVACY_*`, `GROUP_RESULTS_LATENESS`).
    package var privacy = PrivacySettings()
    /// `METRICS_TOKEN`: the bearer token a Prometheus scraper sends for `/metrics` (at least 32 characters).
    /// Unset, `/metrics` answers 404: usage figures are not for anyone who asks.
    package var metricsToken: String?
    /// `TRUSTED_PROXIES`: the reverse proxies whose `X-Forwarded-For` names the client (default none).
    package var trustedProxies = TrustedProxies.none
    /// `LOGIN_ACCOUNT_FREE_ATTEMPTS` and `LOGIN_ADDRESS_MAX_FAILURES`: the password-guess throttle.
    package var loginThrottle = LoginThrottle.Settings()
    /// Argon2id's cost for new password hashes (OWASP's by default; not configurable by environment). The
    /// test harness lowers it: the suite hashes some 1,500 passwords, and at OWASP's cost they took about 8 %
    /// of its CPU. A stored hash names its own parameters, so verification works whatever this is.
    package var passwordHashing = PasswordHasher.Parameters()
    /// `ACTIVATION_EXPIRY_HOURS`: an account not activated within this many hours is deleted, and its email,
    /// fiscal code or VAT number can be registered again.
    package var activationExpiryHours = 48
    /// How often expired unactivated accounts and quiet throttle buckets are swept (tests shorten it).
    package var accountHousekeepingInterval: Duration = .seconds(600)
    /// How often the runs' day passes (`RunDay`): requests, removal at the start, finish detection.
    package var runDayInterval: Duration = .seconds(5)
    /// `PENDING_REQUEST_EXPIRY_DAYS`: days a single request stays pending before it expires unanswered when
    /// its sender chose no `expiresAt` (a request to nobody among them: it must answer and end like any other).
    package var pendingRequestExpiryDays = 30
    /// The key that signs audit checkpoints, read from `AUDIT_SIGNING_KEY_FILE` (a file outside the
    /// database, made by `d4h audit keygen`). Nil signs nothing: auditors then cannot detect a log that
    /// whoever holds the database truncated or rewrote.
    package var auditSigningKey: AuditSigningKey?
    /// The key that signs consent receipts, read from `CONSENT_SIGNING_KEY_FILE` (a file outside the
    /// database, made by `d4h consent keygen`). Nil issues none: grants and their ends then carry no proof
    /// the person and the company can check without trusting the server's database.
    package var consentSigningKey: ConsentSigningKey?
    /// `AUDIT_CHECKPOINT_INTERVAL`: seconds between signed checkpoints when the log has grown (default 300;
    /// one is also signed at start; 0 signs none in the background). Nil is off.
    package var auditCheckpointInterval: Duration? = .seconds(300)
    /// The wall clock every service reads "now" from, for the decisions and stamps made in Swift rather than
    /// left to the database (a run's state, closed buckets, an API key's last use); tests set it or move it by hand.
    package var clock = WallClock.system
    /// `BULK_EXPORT_TTL`: seconds a FHIR bulk export's status and files stay readable after its kick-off
    /// (default 24 h); then they answer 404 and the planner's sweep removes the export.
    package var bulkExportTTL: Duration = .seconds(86_400)
    /// How often the bulk export planner looks for exports to plan and expired ones to remove; nil turns it
    /// off (tests then plan by hand, to see an export while it is planning).
    package var bulkExportPlanningInterval: Duration? = .seconds(1)

    package init(
        databaseURL: String,
        httpHost: String = "127.0.0.1",
        httpPort: Int = 8080,
        publicURL: String? = nil,
        mailTransport: MailTransportKind = .log,
        mailDirectory: String? = nil,
        groupMinCohort: Int = 1000,
        sessionTTL: Int = 86_400,
        webhookAllowPrivate: Bool = false,
        logLevel: Logger.Level = .info,
        tls: TLSFiles? = nil
    ) {
        self.databaseURL = databaseURL
        self.httpHost = httpHost
        self.httpPort = httpPort
        self.publicURL = publicURL ?? "\(tls == nil ? "http" : "https")://\(httpHost):\(httpPort)"
        self.mailTransport = mailTransport
        self.mailDirectory = mailDirectory
        self.groupMinCohort = groupMinCohort
        self.sessionTTL = sessionTTL
        self.webhookAllowPrivate = webhookAllowPrivate
        self.logLevel = logLevel
        self.tls = tls
    }

    /// Reads the configuration; keys are the documented variable names (`database.url` is `DATABASE_URL`).
    package init(reader: ConfigReader) throws {
        guard let databaseURL = reader.string(forKey: "database.url", isSecret: true) else {
            throw ConfigurationError.missing("DATABASE_URL")
        }
        let host = reader.string(forKey: "http.host", default: "127.0.0.1")
        let port = reader.int(forKey: "http.port", default: 8080)
        let transportName = reader.string(forKey: "mail.transport", default: MailTransportKind.log.rawValue)
        guard let transport = MailTransportKind(rawValue: transportName) else {
            throw ConfigurationError.invalid("MAIL_TRANSPORT", "must be file, sendmail, smtp or log")
        }
        let mailDirectory = reader.string(forKey: "mail.directory")
        if transport == .file, mailDirectory == nil {
            throw ConfigurationError.invalid("MAIL_DIRECTORY", "is required when MAIL_TRANSPORT=file")
        }
        let levelName = reader.string(forKey: "log.level", default: "info")
        guard let level = Logger.Level(rawValue: levelName.lowercased()) else {
            throw ConfigurationError.invalid("LOG_LEVEL", "must be trace, debug, info, notice, warning, error or critical")
        }
        let cohort = reader.int(forKey: "group.min.cohort", default: 1000)
        guard cohort >= 1 else { throw ConfigurationError.invalid("GROUP_MIN_COHORT", "must be at least 1") }
        let ttl = reader.int(forKey: "session.ttl", default: 86_400)
        guard ttl >= 60 else { throw ConfigurationError.invalid("SESSION_TTL", "must be at least 60 seconds") }
        guard (0...65_535).contains(port) else { throw ConfigurationError.invalid("HTTP_PORT", "must be 0–65535 (0 lets the system choose)") }
        self.init(
            databaseURL: databaseURL,
            httpHost: host,
            httpPort: port,
            publicURL: reader.string(forKey: "public.url"),
            mailTransport: transport,
            mailDirectory: mailDirectory,
            groupMinCohort: cohort,
            sessionTTL: ttl,
            webhookAllowPrivate: reader.bool(forKey: "webhook.allow.private", default: false),
            logLevel: level,
            tls: try TLSFiles.read(from: reader)
        )
        try readMailSettings(reader)
        let idle = reader.int(forKey: "http.idle.timeout", default: 60)
        guard idle >= 1 else { throw ConfigurationError.invalid("HTTP_IDLE_TIMEOUT", "must be at least 1 second") }
        self.httpIdleTimeout = idle
        if let stall = try reader.wholeNumber("DOWNLOAD_STALL_TIMEOUT", in: 1...3600) { self.downloadStallTimeout = stall }
        self.rateLimits = try RateLimits(reader: reader)
        self.privacy = try PrivacySettings(reader: reader)
        self.database = try DatabaseLimits(reader: reader)
        if let readURL = reader.string(forKey: "database.read.url", isSecret: true), !readURL.isEmpty {
            _ = try DatabaseURL(readURL, variable: "DATABASE_READ_URL", severalHosts: .preferStandby)
            self.databaseReadURL = readURL
        }
        if let seconds = try reader.wholeNumber("DATABASE_READ_MAX_STALENESS", in: 1...3600) { self.databaseReadMaxStaleness = .seconds(seconds) }
        if let slots = try reader.wholeNumber("GROUP_EVALUATION_CONCURRENCY", in: 1...64) { self.groupEvaluationConcurrency = slots }
        if let seconds = try reader.wholeNumber("GROUP_EVALUATION_QUEUE_TIMEOUT", in: 1...600) {
            self.groupEvaluationQueueTimeout = .seconds(seconds)
        }
        if let token = reader.string(forKey: "metrics.token", isSecret: true), !token.isEmpty {
            guard token.count >= 32 else { throw ConfigurationError.invalid("METRICS_TOKEN", "must be at least 32 characters") }
            self.metricsToken = token
        }
        // A list: a flag's value arrives split at its commas, the environment's whole.
        self.trustedProxies = try TrustedProxies.parse(
            reader.stringArray(forKey: "trusted.proxies", default: []).joined(separator: ",")
        ).get()
        if let free = try reader.wholeNumber("LOGIN_ACCOUNT_FREE_ATTEMPTS", in: 1...100) { self.loginThrottle.account.freeFailures = free }
        if let failures = try reader.wholeNumber("LOGIN_ADDRESS_MAX_FAILURES", in: 1...1_000_000) {
            self.loginThrottle.address.freeFailures = failures
        }
        if let hours = try reader.wholeNumber("ACTIVATION_EXPIRY_HOURS", in: 1...8760) { self.activationExpiryHours = hours }
        if let seconds = try reader.wholeNumber("MAIL_SEND_TIMEOUT", in: 1...600) {
            self.mailDelivery.sendTimeout = .seconds(seconds)
            // The lease must outlast the wait, or another instance could send the same mail meanwhile.
            self.mailDelivery.lease = .seconds(seconds * 3)
        }
        if let attempts = try reader.wholeNumber("MAIL_MAX_ATTEMPTS", in: 1...100) { self.mailDelivery.maxAttempts = attempts }
        if let inFlight = try reader.wholeNumber("MAIL_CONCURRENCY", in: 1...256) { self.mailDelivery.maxInFlight = inFlight }
        // At most what a company may choose itself (`expiresAt`): a refusal reads pending to it until then.
        if let days = try reader.wholeNumber("PENDING_REQUEST_EXPIRY_DAYS", in: 1...SingleRequestService.maximumExpiryDays) {
            self.pendingRequestExpiryDays = days
        }
        if let bytes = try reader.wholeNumber("IMPORT_BACKGROUND_BYTES", in: 0...(1 << 40)) { self.importBackgroundBytes = Int64(bytes) }
        // At most 31 days: a subscription's figures change every day.
        if let seconds = try reader.wholeNumber("GROUP_RESULTS_REFRESH_INTERVAL", in: 0...2_678_400, zeroMeans: "off") {
            self.groupResultsRefreshInterval = seconds == 0 ? nil : .seconds(seconds)
        }
        // Read now, so a wrong path or a file that is not a key stops the start with a message naming the variable.
        if let file = reader.string(forKey: "audit.signing.key.file"), !file.isEmpty {
            self.auditSigningKey = try AuditSigningKey.read(file: file)
        }
        if let file = reader.string(forKey: "consent.signing.key.file"), !file.isEmpty {
            self.consentSigningKey = try ConsentSigningKey.read(file: file)
        }
        if let seconds = try reader.wholeNumber("AUDIT_CHECKPOINT_INTERVAL", in: 0...86_400, zeroMeans: "off") {
            self.auditCheckpointInterval = seconds == 0 ? nil : .seconds(seconds)
        }
        // At least a minute (a client needs time to fetch the files), at most a week.
        if let seconds = try reader.wholeNumber("BULK_EXPORT_TTL", in: 60...604_800) { self.bulkExportTTL = .seconds(seconds) }
        // At most a day: a day closes every day.
        if let seconds = try reader.wholeNumber("PEER_STATISTICS_INTERVAL", in: 0...86_400, zeroMeans: "off") {
            self.peerStatisticsInterval = seconds == 0 ? nil : .seconds(seconds)
        }
    }

    /// The evaluation slots the configuration asks for, capped at half the pool (at least one).
    var evaluationSlots: EvaluationSlots {
        EvaluationSlots(slots: max(1, min(groupEvaluationConcurrency, database.poolSize / 2)), timeout: groupEvaluationQueueTimeout)
    }

    /// The background imports the configuration allows at once, capped at a quarter of the pool (at least one).
    var importSlots: Int { max(1, min(importBackgroundConcurrency, database.poolSize / 4)) }

    /// `http`, or `https` when the server terminates TLS itself.
    package var scheme: String { tls == nil ? "http" : "https" }
}
