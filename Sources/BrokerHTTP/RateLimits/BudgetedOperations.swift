import BrokerDomain
import Foundation
import Logging
import OpenAPIRuntime

/// The operations with a per-account budget (`RateLimitedOperation`), as the API's handlers and the
/// console both call them: each charges the caller before any work (before a streamed body is read), so
/// neither front can forget to, or charge twice. A caller of a role that cannot do the operation is not
/// charged: the service's own check answers 403. Downloads are in `BudgetedOperations+Downloads`.
package struct BudgetedOperations: Sendable {
    package init(
        rateLimiter: RateLimiter, accounts: AccountService, samples: SampleService, positions: PositionService, imports: ImportJobs,
        singleRequests: SingleRequestService, groupRequests: GroupRequestService, auditTrail: AuditTrail, streamStallTimeout: Duration,
        spoolDirectory: URL
    ) {
        self.spoolDirectory = spoolDirectory
        self.rateLimiter = rateLimiter
        self.accounts = accounts
        self.samples = samples
        self.positions = positions
        self.imports = imports
        self.singleRequests = singleRequests
        self.groupRequests = groupRequests
        self.auditTrail = auditTrail
        self.streamStallTimeout = streamStallTimeout
    }

    let rateLimiter: RateLimiter
    let accounts: AccountService
    let samples: SampleService
    let positions: PositionService
    let imports: ImportJobs
    let singleRequests: SingleRequestService
    let groupRequests: GroupRequestService
    let auditTrail: AuditTrail
    /// How long a streamed download waits for a client that stops reading (`DOWNLOAD_STALL_TIMEOUT`).
    let streamStallTimeout: Duration
    /// Where uploaded exports are written before they are imported (`BrokerConfiguration.uploadSpoolDirectory`).
    let spoolDirectory: URL

    /// Stores samples already decoded (the API's JSON body).
    func storeSamples(_ entries: [SampleBatch.Entry], timeZone: String?, by principal: Principal, logger: Logger) async throws
        -> SampleStore.UploadResult
    {
        try await admit(principal, to: .uploads, logger: logger)
        return try await samples.upload(entries, timeZone: timeZone, by: principal, logger: logger)
    }

    /// Reads a CSV body (at most the JSON body limit: a 413 beyond) and stores its samples.
    package func storeSamples(csv body: HTTPBody, by principal: Principal, logger: Logger) async throws -> SampleStore.UploadResult {
        try await admit(principal, to: .uploads, logger: logger)
        let entries = try SampleCSV.entries(from: try await Self.text(of: body)).get()
        return try await samples.upload(entries, by: principal, logger: logger)
    }

    /// Stores the Observations of a FHIR Bundle already parsed (the API's `application/fhir+json` body).
    func storeSamples(fhirBundle bundle: [String: (any Sendable)?], by principal: Principal, logger: Logger) async throws
        -> SampleService.FHIRBundleUpload
    {
        try await admit(principal, to: .uploads, logger: logger)
        return try await samples.upload(fhirBundle: bundle, by: principal, logger: logger)
    }

    /// Stores positions already decoded (the API's JSON body), on the same upload budget as samples.
    func storePositions(_ entries: [PositionBatch.Entry], by principal: Principal, logger: Logger) async throws
        -> (accepted: Int, duplicates: Int)
    {
        try await admit(principal, to: .uploads, logger: logger)
        return try await positions.upload(entries, by: principal, logger: logger)
    }

    /// Reads a CSV body of positions (at most the JSON body limit: a 413 beyond) and stores them.
    func storePositions(csv body: HTTPBody, by principal: Principal, logger: Logger) async throws -> (accepted: Int, duplicates: Int) {
        try await admit(principal, to: .uploads, logger: logger)
        let entries = try PositionCSV.entries(from: try await Self.text(of: body)).get()
        return try await positions.upload(entries, by: principal, logger: logger)
    }

    /// A body as text, refused with the API's 413 beyond the JSON body limit (OpenAPIRuntime's own collector
    /// throws an error of its own that would reach the client as a 500).
    private static func text(of body: HTTPBody) async throws -> String {
        var bytes: [UInt8] = []
        for try await chunk in body {
            guard bytes.count + chunk.count <= jsonBodyLimit else { throw BodyTooLarge(maxBytes: jsonBodyLimit) }
            bytes += chunk
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An Apple Health export for the caller: refused at once while another of theirs runs (before the
    /// body is read), then written to a temporary file (a zip is read from its end) and imported, or
    /// started in the background when it is large.
    package func importAppleHealth(_ body: HTTPBody, format: AppleHealthExportReader.Format, by principal: Principal, logger: Logger)
        async throws -> ImportJobs.Submission
    {
        try await admit(principal, to: .imports, logger: logger)
        try await imports.refuseIfImporting(principal)
        let file = try await TemporaryUpload.write(body, in: spoolDirectory, logger: logger)
        return try await imports.submit(file, format: format, userID: principal.accountID, logger: logger)
    }

    /// A group request, evaluated over the whole population; charged before the caller's role and body are checked.
    package func submitGroupRequest(_ creation: GroupRequestService.CreationAsRead, by principal: Principal, logger: Logger) async throws
        -> GroupRequest
    {
        try await admit(principal, to: .groupRequests, logger: logger)
        return try await groupRequests.create(creation, by: principal, logger: logger)
    }

    /// What a group request has released, charged to the company's download budget.
    package func groupResults(id: UUID, for principal: Principal, logger: Logger) async throws -> GroupRelease {
        try await admit(principal, to: .downloads, roles: [.thirdParty], logger: logger)
        return try await groupRequests.results(id: id, for: principal, logger: logger)
    }

    /// The person's own statistics of one type, with their peers' (`GET /v1/me/statistics`).
    func statistics(
        _ principal: Principal, type: SampleType, from: String?, to: String?, bucket: Statistics.Bucket, logger: Logger
    ) async throws -> Statistics {
        try await admit(principal, to: .statistics, logger: logger)
        return try await samples.statistics(principal, type: type, from: from, to: to, bucket: bucket, logger: logger)
    }

    /// The last 30 days of every type the person has data of, by day: the console's page of charts. One page
    /// is one charge, as one API request is: it reads only the types with data, each from the daily rollups.
    package func statisticsOfEveryType(_ principal: Principal, logger: Logger) async throws -> [Statistics] {
        try await admit(principal, to: .statistics, logger: logger)
        var all: [Statistics] = []
        for type in try await samples.typesWithData(principal, logger: logger) {
            all.append(try await samples.statistics(principal, type: type, from: nil, to: nil, bucket: .day, logger: logger))
        }
        return all
    }

    /// Charges `principal` one `operation` when its role is among `roles` (by default the operation's own).
    /// The charge is a statement of its own, on a lease of its own that ends before the operation leases any
    /// connection: so it is called first, outside any lease (`DatabasePool` refuses nested leases).
    func admit(_ principal: Principal, to operation: RateLimitedOperation, roles: Set<Role>? = nil, logger: Logger) async throws {
        guard (roles ?? operation.chargedRoles).contains(principal.role) else { return }
        do {
            try await rateLimiter.admit(principal, to: operation, logger: logger)
        } catch let error as RateLimitExceeded {
            logger.info(
                "rate limited",
                metadata: [
                    "account.id": "\(principal.accountID.uuidString.lowercased())", "rate_limit.operation": "\(operation.rawValue)",
                ])
            throw error
        }
    }
}
