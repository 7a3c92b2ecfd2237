import Foundation
import Logging
import PostgresNIO

/// The rules of group requests: validation, evaluation (cohort, noisy count gate, budget), releases of
/// results through the privacy module (each debited in the privacy ledger, audited and shown in the
/// members' access logs), and the auditors' view.
package struct GroupRequestService: Sendable {
    package let client: DatabasePool
    /// Where a request's first evaluation reads its cohort and cells: a standby of `DATABASE_READ_URL` when
    /// one is recent enough, otherwise `client`.
    package let reads: DatabaseReads
    /// `GROUP_MIN_COHORT`: the fewest people (noisy count) a cohort, and every released cell, may describe.
    package let minimumCohort: Int
    /// How many evaluation steps (a cohort, or one type's cells) run at once, server-wide.
    package let evaluations: EvaluationSlots
    package let privacy: PrivacySettings
    let mechanism: CellMechanism
    /// Which buckets have closed.
    let clock: WallClock
    /// The bench's seam (`EvaluationStep`); nil on a server and in the tests.
    package var stepTimer: EvaluationStepTimer?
    var budgets: PrivacyBudgets { PrivacyBudgets(settings: privacy) }
    var schedule: ReleaseSchedule { ReleaseSchedule(latenessHours: privacy.latenessHours) }

    package init(client: DatabasePool, minimumCohort: Int, evaluations: EvaluationSlots, privacy: PrivacySettings = .init()) {
        self.init(client: client, minimumCohort: minimumCohort, evaluations: evaluations, privacy: privacy, noise: SecureNoise())
    }

    /// Tests inject the noise here, at the library level; a running server always has `SecureNoise`.
    package init(
        client: DatabasePool, minimumCohort: Int, evaluations: EvaluationSlots, privacy: PrivacySettings, noise: any NoiseSource,
        clock: WallClock = .system, reads: DatabaseReads? = nil
    ) {
        self.clock = clock
        self.client = client
        self.reads = reads ?? DatabaseReads(primary: client)
        self.minimumCohort = minimumCohort
        self.evaluations = evaluations
        self.privacy = privacy
        self.mechanism = CellMechanism(noise: noise, minimumPeople: minimumCohort)
    }

    /// A group request as a company asks for it, in domain terms: the edges read their wire formats into it.
    package struct Creation: Sendable {
        package var types: [SampleType]
        package var filters: [GroupRequest.Filter]
        package var demographics: GroupRequest.Demographics
        package var windowFrom: CalendarDate
        package var windowTo: CalendarDate
        package var bucket: Statistics.Bucket
        package var purpose: String
        package var subscriptionDays: Int?
        /// ρ per released cell (`privacy.cellLoss`); nil takes `PRIVACY_CELL_RHO`. A number rather than a
        /// `PrivacyLoss`: the range is checked on the ρ as asked, before any rounding to a millionth.
        package var cellLoss: Double?
        package var purposeCode: PurposeOfUse

        package init(
            types: [SampleType], filters: [GroupRequest.Filter], demographics: GroupRequest.Demographics, windowFrom: CalendarDate,
            windowTo: CalendarDate, bucket: Statistics.Bucket, purpose: String, subscriptionDays: Int?, cellLoss: Double? = nil,
            purposeCode: PurposeOfUse
        ) {
            (self.types, self.filters, self.demographics) = (types, filters, demographics)
            (self.windowFrom, self.windowTo, self.bucket, self.purpose, self.subscriptionDays) = (
                windowFrom, windowTo, bucket, purpose, subscriptionDays
            )
            self.cellLoss = cellLoss
            self.purposeCode = purposeCode
        }
    }

    /// A creation as an edge read it: each value typed, or `unreadable` with the edge's reason. `creation(from:)`
    /// turns it into a `Creation`, or names every problem at once: the edge's and the rules' the rest breaks.
    package struct CreationAsRead: Sendable {
        package struct Filter: Sendable {
            package var type: Parsed<SampleType>
            package var min: Double?
            package var max: Double?
            package init(type: Parsed<SampleType>, min: Double?, max: Double?) { (self.type, self.min, self.max) = (type, min, max) }
        }
        package var types: [Parsed<SampleType>]
        package var filters: [Filter]
        package var ageMin: Int?
        package var ageMax: Int?
        package var sex: Parsed<Sex>?
        package var windowFrom: Parsed<CalendarDate>
        package var windowTo: Parsed<CalendarDate>
        package var bucket: Parsed<Statistics.Bucket>
        package var purpose: String
        package var subscriptionDays: Int?
        package var cellLoss: Double?
        package var purposeCode: Parsed<PurposeOfUse>

        package init(
            types: [Parsed<SampleType>], filters: [Filter], ageMin: Int?, ageMax: Int?, sex: Parsed<Sex>?, windowFrom: Parsed<CalendarDate>,
            windowTo: Parsed<CalendarDate>, bucket: Parsed<Statistics.Bucket>, purpose: String, subscriptionDays: Int?, cellLoss: Double?,
            purposeCode: Parsed<PurposeOfUse>
        ) {
            (self.types, self.filters, self.ageMin, self.ageMax, self.sex) = (types, filters, ageMin, ageMax, sex)
            (self.windowFrom, self.windowTo, self.bucket, self.purpose, self.subscriptionDays) = (
                windowFrom, windowTo, bucket, purpose, subscriptionDays
            )
            self.cellLoss = cellLoss
            self.purposeCode = purposeCode
        }

        init(_ creation: Creation) {
            self.init(
                types: creation.types.map { .value($0) }, filters: creation.filters.map { .init(type: .value($0.type), min: $0.min, max: $0.max) },
                ageMin: creation.demographics.ageMin, ageMax: creation.demographics.ageMax, sex: creation.demographics.sex.map { .value($0) },
                windowFrom: .value(creation.windowFrom), windowTo: .value(creation.windowTo), bucket: .value(creation.bucket),
                purpose: creation.purpose, subscriptionDays: creation.subscriptionDays, cellLoss: creation.cellLoss,
                purposeCode: .value(creation.purposeCode))
        }

        /// A code as an edge read it (a JSON string, a form's select): one of the value set, or why not.
        package static func purposeCode(_ text: String?) -> Parsed<PurposeOfUse> {
            let codes = PurposeOfUse.allCases.map(\.code).joined(separator: ", ")
            guard let text, !text.isEmpty else { return .unreadable("is required: one of \(codes)") }
            return PurposeOfUse(code: text).map { .value($0) } ?? .unreadable("must be one of \(codes)")
        }
    }

    struct ValidCreation: Sendable {
        var types: [SampleType]
        var filters: [GroupRequest.Filter]
        var demographics: GroupRequest.Demographics
        var windowFrom: CalendarDate
        var windowTo: CalendarDate
        var bucket: Statistics.Bucket
        var purpose: String
        var subscriptionDays: Int?
        var cellLoss: PrivacyLoss
        var purposeCode: PurposeOfUse
    }

    // MARK: Creation

    /// The buckets released at creation: a one-off request's whole window, at once and frozen; a
    /// subscription's buckets from the window's start that have closed (a subscription runs past the
    /// window's end, to its own), at most a release's worth; the rest follow, each once, as they close.
    func initialBuckets(of request: ValidCreation, now: Date) -> [CalendarDate] {
        guard request.subscriptionDays != nil else { return request.bucket.starts(from: request.windowFrom, to: request.windowTo) }
        guard let last = schedule.lastClosed(request.bucket, from: request.windowFrom, now: now, stop: nil) else { return [] }
        return Array(
            request.bucket.starts(from: request.windowFrom, to: last)
                .prefix(privacy.bucketsPerRelease(types: request.types.count, cellLoss: request.cellLoss)))
    }

    /// `create` of a creation as an edge read it: the caller's role is checked before what they sent.
    package func create(_ read: CreationAsRead, by principal: Principal, logger: Logger) async throws -> GroupRequest {
        guard principal.role == .thirdParty else { throw WrongRole("Only third parties send group requests.") }
        return try await create(try creation(from: read), by: principal, logger: logger)
    }

    /// Evaluates the request at once and stores it accepted (with its first release) or refused.
    ///
    /// The cohort leaves out anyone whose yearly privacy cap, or this company's share of it, this request
    /// could pass. Its size is released
    /// only as a noisy count, and the request is refused when that noisy count is below k: the refusal is
    /// part of the mechanism and costs the price of one cell. The expensive part (the cohort, then the cells)
    /// runs first, in evaluation slots and without any lock, each step on a connection of its own. Only the
    /// budget checks, the debits and the writes run under the ledger lock, so two requests racing for the
    /// last of a budget cannot both be released.
    package func create(_ creation: Creation, by principal: Principal, logger: Logger) async throws -> GroupRequest {
        guard principal.role == .thirdParty else { throw WrongRole("Only third parties send group requests.") }
        let valid = try Self.validate(creation, privacy: privacy)
        let company = principal.accountID
        let buckets = initialBuckets(of: valid, now: clock.now)
        let cellCount = buckets.count * valid.types.count
        let cohortCost = valid.cellLoss
        let releaseCost = valid.cellLoss * cellCount
        try ensureSomeoneCanAfford(cohortCost + releaseCost, cells: cellCount)
        // Refused before any data is read when the budget cannot pay (a data-independent answer).
        try await step(.budgetCheck) {
            try await client.withConnection { try await budgets.ensureAffordable(cohortCost + releaseCost, by: company, on: $0, logger: logger) }
        }
        var onPrimaryOnly = false
        for _ in 0..<3 {
            // From a standby when one is recent enough, each read noting the consent version it started from;
            // after a withdrawal of consent raced the evaluation, or the standby failed, from the primary.
            let source = onPrimaryOnly ? (pool: client, onStandby: false) : reads.source()
            let seen = source.onStandby ? ConsentVersionsSeen() : nil
            let matching: [Int32]
            do {
                matching = try await step(.cohort) {
                    try await matchingCohort(
                        filters: valid.filters, demographics: valid.demographics, from: valid.windowFrom, to: valid.windowTo,
                        excludingBlocksOf: company, reading: source.pool, noting: seen, logger: logger)
                }
            } catch  where source.onStandby && Self.standbyMayFailOver(error) {
                logger.warning("a group evaluation's read on the standby failed; reading the primary", metadata: ["error": "\(error)"])
                onPrimaryOnly = true
                continue
            }
            let (cohort, ledgerMark) = try await step(.caps) {
                try await client.withConnection { connection in
                    // The ledger's newest entry, read before the caps: a debit committed after it moves it.
                    let mark = try await PrivacyLedgerStore.newestEntry(on: connection, logger: logger)
                    let eligible = try await budgets.eligible(
                        matching, cost: cohortCost + releaseCost, company: company, on: connection, logger: logger)
                    return (eligible, mark)
                }
            }
            let size = mechanism.count(cohort.count, loss: cohortCost)
            let accepted = size >= minimumCohort
            var cells: [GroupResultCell] = []
            do {
                if accepted && !buckets.isEmpty {
                    cells = try await step(.cells) {
                        try await released(
                            types: valid.types, bucket: valid.bucket,
                            days: Self.days(
                                of: buckets, bucket: valid.bucket, windowFrom: valid.windowFrom,
                                windowTo: valid.subscriptionDays == nil ? valid.windowTo : nil),
                            cohort: cohort, cellLoss: valid.cellLoss, company: company, reading: source.pool, noting: seen, logger: logger)
                    }
                }
            } catch  where source.onStandby && Self.standbyMayFailOver(error) {
                logger.warning("a group evaluation's read on the standby failed; reading the primary", metadata: ["error": "\(error)"])
                onPrimaryOnly = true
                continue
            }
            let attempt: Attempt = try await step(.write) {
                try await client.withTransaction(logger: logger) { connection in
                    try await step(.lock) { try await PrivacyLedgerStore.lock(on: connection, logger: logger) }
                    // Someone withdrew consent (a block, a type no longer shared, an account that left) after the
                    // standby's reads began: its cohort may count them. Evaluate again on the primary.
                    if let seen, try await !seen.allSaw(ConsentVersionStore.version(on: connection, logger: logger)) {
                        return .consentChanged
                    }
                    let charged = accepted ? cohortCost + releaseCost : cohortCost
                    // Someone's cap, or this company's share of it, was spent by another release meanwhile: evaluate
                    // again without them. No ledger entry since the caps were read means no debit either (each one
                    // records an entry under this lock), and `charged` is at most what they were read for: they
                    // still hold, and the cohort's caps (a tenth of the path at 8,000 people) are not read twice.
                    let ledgerMoved = try await PrivacyLedgerStore.newestEntry(on: connection, logger: logger) != ledgerMark
                    if ledgerMoved {
                        let stillEligible = try await step(.capsAgain) {
                            try await budgets.eligible(cohort, cost: charged, company: company, on: connection, logger: logger).count
                                == cohort.count
                        }
                        guard stillEligible else { return .capsChanged }
                    }
                    try await step(.companyBudget) { try await budgets.ensureAffordable(charged, by: company, on: connection, logger: logger) }
                    let request = try await step(.requestRow) {
                        try await GroupRequestStore.insert(
                            valid, thirdPartyID: company, status: accepted ? .accepted : .refused, reason: accepted ? nil : .cohortBelowThreshold,
                            cohort: accepted ? cohort : nil, cohortSize: accepted ? size : nil, releasedThrough: accepted ? buckets.last : nil,
                            on: connection, logger: logger)
                    }
                    try await PrivacyLedgerStore.record(
                        company: company, request: request.id, kind: .cohort, cells: 1, loss: cohortCost, on: connection, logger: logger)
                    try await step(.debits) {
                        try await PrivacyLedgerStore.debit(
                            cohort, loss: charged, company: company, request: request.id, on: connection, logger: logger)
                    }
                    try await AuditLog.append(
                        AuditEvent(
                            actorID: company.uuidString.lowercased(), actorRole: Role.thirdParty.rawValue,
                            action: accepted ? AuditAction.groupRequestAccepted : AuditAction.groupRequestRefused,
                            requestID: request.id,
                            details: [
                                "types": .string(valid.types.map(\.rawValue).joined(separator: ",")),
                                "reason": .string(accepted ? "" : GroupRequest.RefusalReason.cohortBelowThreshold.rawValue),
                                "cohortSize": .int(accepted ? size : 0), "rho": .string(PrivacyFormat.rho(cohortCost.rho)),
                                "purposeCode": .string(valid.purposeCode.code),
                            ]),
                        on: connection, logger: logger)
                    if accepted {
                        // A subscription none of whose buckets has closed yet releases nothing now: no empty release,
                        // and no access-log entry for a contribution that has not happened.
                        if !cells.isEmpty {
                            try await record(
                                cells, of: request, members: cohort, firstRelease: true, loss: releaseCost, on: connection, logger: logger)
                        }
                        // Just released: the background release need not look at it for a whole interval.
                        try await GroupRequestStore.markResultsChecked(request.id, on: connection, logger: logger)
                    }
                    return .stored(request)
                }
            }
            switch attempt {
            case .stored(let request): return request
            case .consentChanged: onPrimaryOnly = true
            case .capsChanged: break
            }
        }
        throw GroupRequestError.busy
    }

    /// A read on the standby that failed for the standby's sake (lost, a recovery conflict that cancelled the
    /// statement, its pool busy) is read again on the primary; a busy evaluation queue or a cancelled request
    /// is not the standby's doing and is answered as it is.
    static func standbyMayFailOver(_ error: any Error) -> Bool {
        !(error is CancellationError) && !(PostgresErrors.unwrapTransaction(error) is EvaluationsBusy)
    }

    /// How one evaluation of `create` ended.
    private enum Attempt {
        case stored(GroupRequest)
        /// Someone's cap, or the company's share of it, was spent meanwhile: evaluate again without them.
        case capsChanged
        /// Consent was withdrawn after a standby's reads began: evaluate again on the primary.
        case consentChanged
    }

    /// Stores newly released cells and records them: the ledger debit, an audit event with what it cost,
    /// and an access-log entry for each member whose data went into them. `firstRelease`: the request was
    /// inserted in this very transaction, so no member can have an entry of it yet.
    private func record(
        _ cells: [GroupResultCell], of request: GroupRequest, members: [Int32], firstRelease: Bool, loss: PrivacyLoss,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await step(.release) { try await GroupReleaseStore.storeRelease(cells, of: request.id, loss: loss, on: connection, logger: logger) }
        try await PrivacyLedgerStore.record(
            company: request.thirdParty.id, request: request.id, kind: .release, cells: cells.count, loss: loss, on: connection, logger: logger)
        try await step(.accessLog) {
            try await AccessLogStore.recordGroupContributions(
                of: request, members: members, firstToday: firstRelease, on: connection, logger: logger)
        }
        try await AuditLog.append(
            AuditEvent(
                actorID: request.thirdParty.id.uuidString.lowercased(), actorRole: Role.thirdParty.rawValue,
                action: AuditAction.groupResultsReleased, requestID: request.id,
                details: [
                    "cells": .int(cells.count), "suppressedCells": .int(cells.filter(\.suppressed).count),
                    "rho": .string(PrivacyFormat.rho(loss.rho)),
                ]),
            on: connection, logger: logger)
    }

    /// The people who match `filters` and `demographics` over the window (`GroupCohortStore.cohort`), before
    /// their caps: each filter's type is read on a connection of its own in an evaluation slot, side by side
    /// when slots are free, and a person is in the cohort only when every filter's read has them (so only
    /// when active, of the demographics and not blocking the company in each). Each read scans only its
    /// own type's rollups, so two filters take about the time of one rather than of both.
    package func matchingCohort(
        filters: [GroupRequest.Filter], demographics: GroupRequest.Demographics, from: CalendarDate, to: CalendarDate,
        excludingBlocksOf company: UUID, reading pool: DatabasePool? = nil, noting seen: ConsentVersionsSeen? = nil, logger: Logger
    ) async throws -> [Int32] {
        let client = pool ?? client
        let evaluations = evaluations
        let parts: [[GroupRequest.Filter]] = filters.isEmpty ? [[]] : filters.map { [$0] }
        let matches = try await withThrowingTaskGroup(of: [Int32].self) { group in
            for part in parts {
                group.addTask {
                    try await step(.cohortFilter) {
                        try await evaluations.withSlot(for: company) {
                            try await client.withTransaction(logger: logger) { connection in
                                if let seen { seen.note(try await ConsentVersionStore.version(on: connection, logger: logger)) }
                                try await GroupCohortStore.allowLargeSorts(on: connection, logger: logger)
                                return try await GroupCohortStore.cohort(
                                    filters: part, demographics: demographics, from: from, to: to, excludingBlocksOf: company,
                                    on: connection, logger: logger)
                            }
                        }
                    }
                }
            }
            return try await group.reduce(into: [[Int32]]()) { $0.append($1) }
        }
        return Self.intersection(of: matches)
    }

    /// The numbers in every one of `sets` (each sorted ascending, as `GroupCohortStore.cohort` returns
    /// them), ascending.
    static func intersection(of sets: [[Int32]]) -> [Int32] {
        guard var result = sets.min(by: { $0.count < $1.count }) else { return [] }
        for other in sets {
            let members = Set(other)
            result = result.filter(members.contains)
        }
        return result
    }

    /// Times `work` as `step` when the bench set a timer.
    func step<T>(_ step: EvaluationStep, _ work: () async throws -> T) async rethrows -> T {
        guard let stepTimer else { return try await work() }
        return try await stepTimer.time(step, work)
    }

    /// The days the cells of `buckets` (bucket starts, in order) hold: every day of each bucket, but none
    /// before the window's start and, for a one-off request (`windowTo` given), none after its end. A
    /// subscription's later buckets lie past `window.to` and are released whole.
    static func days(of buckets: [CalendarDate], bucket: Statistics.Bucket, windowFrom: CalendarDate, windowTo: CalendarDate?)
        -> ClosedRange<CalendarDate>?
    {
        guard let first = buckets.first, let last = buckets.last else { return nil }
        let end = bucket.next(after: last).adding(days: -1)
        let from = max(first, windowFrom)
        let to = windowTo.map { min(end, $0) } ?? end
        return from <= to ? from...to : nil
    }

    /// The released cells of every requested type, one per bucket of `days`: each type's exact aggregates
    /// computed on a connection of its own in an evaluation slot of the company's (so PostgreSQL works on
    /// them side by side when slots are free), then passed through the mechanism.
    private func released(
        types: [SampleType], bucket: Statistics.Bucket, days: ClosedRange<CalendarDate>?, cohort: [Int32],
        cellLoss: PrivacyLoss, company: UUID, reading pool: DatabasePool, noting seen: ConsentVersionsSeen? = nil, logger: Logger
    ) async throws -> [GroupResultCell] {
        guard let days else { return [] }
        let first = days.lowerBound
        let last = days.upperBound
        let client = pool
        let evaluations = evaluations
        let mechanism = mechanism
        let cells = try await withThrowingTaskGroup(of: [GroupResultCell].self) { group in
            for type in types {
                group.addTask {
                    try await step(.cellsType) {
                        let exact = try await evaluations.withSlot(for: company) {
                            try await client.withTransaction(logger: logger) { connection in
                                if let seen { seen.note(try await ConsentVersionStore.version(on: connection, logger: logger)) }
                                try await GroupCohortStore.allowLargeSorts(on: connection, logger: logger)
                                return try await CellAggregateStore.groupCells(
                                    cohort: cohort, type: type, bucket: bucket, from: first, to: last, on: connection, logger: logger)
                            }
                        }
                        let calibration = CellCalibration(type: type, loss: cellLoss)
                        return exact.map { mechanism.release($0, calibration: calibration) }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return cells.sorted { ($0.bucketStart, $0.type.code) < ($1.bucketStart, $1.type.code) }
    }

    // MARK: Reads

    /// One of the third party's own requests (auditors read releases, `releasedResults`).
    package func request(id: UUID, for principal: Principal, logger: Logger) async throws -> GroupRequest {
        guard principal.role == .thirdParty else { throw WrongRole("Only the sender reads a group request here; auditors use /v1/audit.") }
        return try await client.withConnection { connection in
            guard let request = try await GroupRequestStore.request(id: id, sender: principal.accountID, on: connection, logger: logger)
            else { throw GroupRequestError.notFound }
            return request
        }
    }

    /// A third party's own requests, newest first.
    package func list(for principal: Principal, status: GroupRequest.Status?, page: PageRequest, logger: Logger) async throws
        -> Page<GroupRequest>
    {
        guard principal.role == .thirdParty else { throw WrongRole("Only third parties list their group requests; auditors use /v1/audit.") }
        return try await list(sender: principal.accountID, status: status, page: page, logger: logger)
    }

    /// Every company's requests, newest first, for auditors.
    package func auditList(for principal: Principal, status: GroupRequest.Status?, page: PageRequest, logger: Logger) async throws
        -> Page<GroupRequest>
    {
        guard principal.role == .auditor else { throw WrongRole("Only auditors read every company's group requests.") }
        return try await list(sender: nil, status: status, page: page, logger: logger)
    }

    private func list(sender: UUID?, status: GroupRequest.Status?, page: PageRequest, logger: Logger) async throws -> Page<GroupRequest> {
        let (limit, after) = try page.readByTimeAndID()
        let rows = try await client.withConnection { connection in
            try await GroupRequestStore.list(sender: sender, status: status, after: after, limit: limit, on: connection, logger: logger)
        }
        return Page(rows: rows, limit: limit) { PageKey(time: $0.createdAt, id: $0.id) }
    }

    /// The sender's results: every cell released so far. A read changes nothing: a subscription's buckets
    /// are released by `GroupResultsRefresh` once they close, never because someone looked (a page view or
    /// a GET that wrote releases, ledger entries, audit events and access-log rows would let any reader
    /// spend the budget and fill the people's logs).
    package func results(id: UUID, for principal: Principal, logger: Logger) async throws -> GroupRelease {
        guard principal.role == .thirdParty else { throw WrongRole("Only the sender reads results here; auditors use /v1/audit.") }
        let release = try await client.withConnection { connection -> GroupRelease? in
            guard let request = try await GroupRequestStore.request(id: id, sender: principal.accountID, on: connection, logger: logger)
            else { throw GroupRequestError.notFound }
            guard request.status == .accepted else { throw GroupRequestError.notAccepted }
            return try await GroupReleaseStore.releasedCells(of: id, on: connection, logger: logger)
        }
        guard let release else { throw GroupRequestError.notReleased }
        return release
    }

    /// Releases a subscription's buckets that have closed (`ReleaseSchedule`) since its last release, while
    /// it runs: the frozen cohort's remaining members who can still afford them (within their cap and the
    /// company's share of it), through the mechanism,
    /// debited and queued as `group_request.results_updated`. True when something was released.
    ///
    /// The computation holds no lock; the store runs under the ledger lock and the request's row lock, and
    /// only if no other release of the request happened meanwhile (then this one is dropped unreleased).
    func releaseClosedBuckets(of request: GroupRequest, logger: Logger) async throws -> Bool {
        guard let subscription = request.subscription, let cellLoss = request.cellLoss else { return false }
        let first = request.releasedThrough.map { request.bucket.next(after: $0) } ?? request.windowFrom
        let stop = subscription.endedAt ?? subscription.endsAt
        guard let last = schedule.lastClosed(request.bucket, from: first, now: clock.now, stop: stop) else { return false }
        // At most a release's worth of buckets at once (a subscription that was starved of budget catches up in steps).
        let buckets = Array(
            request.bucket.starts(from: first, to: last)
                .prefix(privacy.bucketsPerRelease(types: request.types.count, cellLoss: cellLoss)))
        let cost = cellLoss * (buckets.count * request.types.count)
        try await client.withConnection { try await budgets.ensureAffordable(cost, by: request.thirdParty.id, on: $0, logger: logger) }
        let (members, ledgerMark) = try await client.withConnection { connection in
            let frozen = try await GroupCohortStore.cohort(of: request.id, on: connection, logger: logger)
            // The ledger's newest entry, read before the caps: a debit committed after it moves it (as in `create`).
            let mark = try await PrivacyLedgerStore.newestEntry(on: connection, logger: logger)
            return (try await budgets.eligible(frozen, cost: cost, company: request.thirdParty.id, on: connection, logger: logger), mark)
        }
        let cells = try await released(
            types: request.types, bucket: request.bucket,
            days: Self.days(of: buckets, bucket: request.bucket, windowFrom: request.windowFrom, windowTo: nil), cohort: members,
            cellLoss: cellLoss, company: request.thirdParty.id, reading: client, logger: logger)
        return try await client.withTransaction(logger: logger) { connection in
            try await PrivacyLedgerStore.lock(on: connection, logger: logger)
            guard let current = try await GroupRequestStore.requestLockedForRelease(request.id, on: connection, logger: logger),
                current.releasedThrough == request.releasedThrough
            else { return false }
            // Another release's debit since the caps were read may have spent someone's cap: read them again, and
            // drop this release if anyone can no longer afford it. No ledger entry since means no debit either.
            if try await PrivacyLedgerStore.newestEntry(on: connection, logger: logger) != ledgerMark {
                let stillEligible = try await step(.capsAgain) {
                    try await budgets.eligible(members, cost: cost, company: request.thirdParty.id, on: connection, logger: logger).count
                        == members.count
                }
                guard stillEligible else { return false }
            }
            try await budgets.ensureAffordable(cost, by: request.thirdParty.id, on: connection, logger: logger)
            try await PrivacyLedgerStore.debit(
                members, loss: cost, company: request.thirdParty.id, request: request.id, on: connection, logger: logger)
            try await record(cells, of: current, members: members, firstRelease: false, loss: cost, on: connection, logger: logger)
            try await GroupReleaseStore.setReleasedThrough(buckets.last!, of: request.id, on: connection, logger: logger)
            try await WebhookOutboxStore.enqueue(
                .groupRequestResultsUpdated, to: current.thirdParty.id, requestID: current.id, data: [:],
                on: connection, logger: logger)
            return true
        }
    }

    /// Releases the closed buckets of the live subscription looked at longest ago, if that was more than
    /// `interval` ago (see `GroupResultsRefresh`); false when none is due. The claim marks it looked at, so
    /// one that fails (or waits for budget) takes its turn again rather than holding up the others.
    func refreshNextDueSubscription(interval: Duration, logger: Logger) async throws -> Bool {
        let claimed = try await client.withConnection { connection in
            try await GroupRequestStore.claimSubscriptionDueForRefresh(checkedBefore: interval, on: connection, logger: logger)
        }
        guard let claimed else { return false }
        let request = try await client.withConnection { try await GroupRequestStore.request(id: claimed, sender: nil, on: $0, logger: logger) }
        guard let request else { return true }
        do {
            if try await releaseClosedBuckets(of: request, logger: logger) {
                logger.info("group subscription released new buckets", metadata: ["request.id": "\(request.id)"])
            }
        } catch let error as PrivacyError {
            logger.info("group subscription release waits for budget", metadata: ["request.id": "\(request.id)", "error": "\(error)"])
        }
        return true
    }

    /// What was released, for auditors: the same stored cells the third party received.
    package func releasedResults(id: UUID, for principal: Principal, logger: Logger) async throws -> GroupRelease {
        guard principal.role == .auditor else { throw WrongRole("Only auditors read this.") }
        return try await client.withConnection { connection in
            guard try await GroupRequestStore.request(id: id, sender: nil, on: connection, logger: logger) != nil
            else { throw GroupRequestError.notFound }
            guard let released = try await GroupReleaseStore.releasedCells(of: id, on: connection, logger: logger)
            else { throw GroupRequestError.notReleased }
            return released
        }
    }

    package func endSubscription(id: UUID, by principal: Principal, logger: Logger) async throws -> GroupRequest {
        guard principal.role == .thirdParty else { throw WrongRole("Only the sender ends a group subscription.") }
        return try await client.withTransaction(logger: logger) { connection in
            if let ended = try await GroupRequestStore.endSubscription(id: id, sender: principal.accountID, on: connection, logger: logger) {
                try await AuditLog.append(
                    AuditEvent(
                        actorID: principal.accountID.uuidString.lowercased(), actorRole: Role.thirdParty.rawValue,
                        action: AuditAction.subscriptionEnded, requestID: id,
                        details: ["endedBy": .string("third_party"), "reason": .string("revoked"), "kind": .string("group")]),
                    on: connection, logger: logger)
                return ended
            }
            guard let current = try await GroupRequestStore.request(id: id, sender: principal.accountID, on: connection, logger: logger)
            else { throw GroupRequestError.notFound }
            switch (current.status, current.subscription?.status) {
            case (.refused, _): throw GroupRequestError.noActiveSubscription("The group request was refused.")
            case (_, nil): throw GroupRequestError.noActiveSubscription("This group request has no subscription.")
            case (_, .expired): throw GroupRequestError.noActiveSubscription("The subscription has already expired.")
            default: throw GroupRequestError.noActiveSubscription("The subscription has already ended.")
            }
        }
    }
}
