import Foundation
import Logging
import PostgresNIO

/// The rules of group requests: validation, evaluation (cohort, count gate, similarity check), releases of
/// results (each audited and shown in the members' access logs), and the auditors' view.
public struct GroupRequestService: Sendable {
    public let client: DatabasePool
    /// `GROUP_MIN_COHORT`: the fewest people a cohort, and every released cell, may describe.
    public let minimumCohort: Int
    /// How many evaluation steps (a cohort, or one type's cells) run at once, server-wide.
    public let evaluations: EvaluationSlots

    public init(client: DatabasePool, minimumCohort: Int, evaluations: EvaluationSlots) {
        self.client = client
        self.minimumCohort = minimumCohort
        self.evaluations = evaluations
    }

    public struct Creation: Sendable {
        public struct Filter: Sendable {
            public var type: String
            public var min: Double?
            public var max: Double?
            public init(type: String, min: Double?, max: Double?) { (self.type, self.min, self.max) = (type, min, max) }
        }
        public var types: [String]
        public var filters: [Filter]
        public var ageMin: Int?
        public var ageMax: Int?
        public var sex: String?
        public var windowFrom: String
        public var windowTo: String
        public var bucket: String
        public var purpose: String
        public var subscriptionDays: Int?

        public init(
            types: [String], filters: [Filter], ageMin: Int?, ageMax: Int?, sex: String?, windowFrom: String, windowTo: String,
            bucket: String, purpose: String, subscriptionDays: Int?
        ) {
            (self.types, self.filters, self.ageMin, self.ageMax, self.sex) = (types, filters, ageMin, ageMax, sex)
            (self.windowFrom, self.windowTo, self.bucket, self.purpose, self.subscriptionDays) = (windowFrom, windowTo, bucket, purpose, subscriptionDays)
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
    }

    // MARK: Creation

    /// Evaluates the request at once and stores it accepted (with its first release) or refused. The
    /// refusal never tells how many people matched.
    ///
    /// The expensive part (the cohort, then the cells) runs first, in evaluation slots and without any
    /// lock, each step on a connection of its own that it gives back before the next. Only the check
    /// against earlier releases and the writes run serialised (`lockEvaluation`), and only for a cohort
    /// that may be released: one company's large request never queues another's behind a lock.
    public func create(_ creation: Creation, by principal: Principal, logger: Logger) async throws -> GroupRequest {
        guard principal.role == .thirdParty else { throw GroupRequestError.wrongRole("Only third parties send group requests.") }
        let valid = try Self.validate(creation)
        let company = principal.accountID
        let cohort = try await evaluations.withSlot(for: company) {
            try await client.withTransaction(logger: logger) { connection in
                try await GroupRequestStore.allowLargeSorts(on: connection, logger: logger)
                return try await GroupRequestStore.cohort(
                    filters: valid.filters, demographics: valid.demographics, from: valid.windowFrom, to: valid.windowTo,
                    on: connection, logger: logger)
            }
        }
        var reason: GroupRequest.RefusalReason? = cohort.count < minimumCohort ? .cohortBelowThreshold : nil
        if reason == nil, try await isTooSimilar(cohort, logger: logger) { reason = .cohortTooSimilar }
        // Computed before the lock; a request refused under it has spent the work, but held up nobody.
        let cells = reason != nil ? nil : try await cells(
            types: valid.types, bucket: valid.bucket, from: valid.windowFrom,
            to: valid.subscriptionDays == nil ? valid.windowTo : max(valid.windowTo, .today), cohort: cohort, company: company, logger: logger)
        return try await client.withTransaction(logger: logger) { connection in
            if cells != nil {
                // Another request may have been released since the check above: it counts only under the lock.
                try await GroupRequestStore.lockEvaluation(on: connection, logger: logger)
                if try await GroupRequestStore.isTooSimilar(cohort, k: minimumCohort, on: connection, logger: logger) { reason = .cohortTooSimilar }
            }
            let request = try await GroupRequestStore.insert(
                valid, thirdPartyID: company, status: reason == nil ? .accepted : .refused, reason: reason,
                cohort: reason == nil ? cohort : nil, on: connection, logger: logger)
            try await AuditLog.append(
                AuditEvent(actorID: company.uuidString.lowercased(), actorRole: Role.thirdParty.rawValue,
                           action: reason == nil ? AuditAction.groupRequestAccepted : AuditAction.groupRequestRefused,
                           requestID: request.id,
                           details: ["types": .string(valid.types.map(\.rawValue).joined(separator: ",")),
                                     "reason": .string(reason?.rawValue ?? ""), "cohortSize": .int(reason == nil ? cohort.count : 0)]),
                on: connection, logger: logger)
            if reason == nil, let cells {
                _ = try await record(cells, of: request, on: connection, logger: logger)
                // Just computed: the background refresh need not look at it for a whole interval.
                try await GroupRequestStore.markResultsChecked(request.id, on: connection, logger: logger)
            }
            return request
        }
    }

    /// The similarity check outside the lock: a cohort it refuses is refused without computing its cells.
    private func isTooSimilar(_ cohort: [Int32], logger: Logger) async throws -> Bool {
        try await client.withConnection { try await GroupRequestStore.isTooSimilar(cohort, k: minimumCohort, on: $0, logger: logger) }
    }

    /// Stores cells as a new release and records it: an audit event, and an access-log entry for each
    /// remaining cohort member saying their data contributed to an anonymised aggregate.
    private func record(_ cells: [GroupResultCell], of request: GroupRequest, on connection: PostgresConnection, logger: Logger) async throws
        -> GroupRelease
    {
        let release = try await GroupRequestStore.storeRelease(cells, of: request.id, on: connection, logger: logger)
        try await GroupRequestStore.recordContributions(of: request, on: connection, logger: logger)
        try await AuditLog.append(
            AuditEvent(actorID: request.thirdParty.id.uuidString.lowercased(), actorRole: Role.thirdParty.rawValue,
                       action: AuditAction.groupResultsReleased, requestID: request.id,
                       details: ["cells": .int(cells.count), "suppressedCells": .int(cells.filter(\.suppressed).count)]),
            on: connection, logger: logger)
        return release
    }

    /// The results of a stored request up to its last result day (today, for a live subscription).
    private func cells(of request: GroupRequest, cohort: [Int32], today: CalendarDate, logger: Logger) async throws -> [GroupResultCell] {
        try await cells(
            types: request.types, bucket: request.bucket, from: request.windowFrom, to: request.lastResultDay(today: today), cohort: cohort,
            company: request.thirdParty.id, logger: logger)
    }

    /// The results of every requested type, each type computed on a connection of its own in an evaluation
    /// slot of the company's, so PostgreSQL works on them side by side when slots are free (a release's cost
    /// is mostly sorting each type's person-days) and they take their turn with other companies' when not.
    private func cells(
        types: [SampleType], bucket: Statistics.Bucket, from: CalendarDate, to last: CalendarDate, cohort: [Int32], company: UUID,
        logger: Logger
    ) async throws -> [GroupResultCell] {
        let k = minimumCohort, client = client, evaluations = evaluations
        let cells = try await withThrowingTaskGroup(of: [GroupResultCell].self) { group in
            for type in types {
                group.addTask {
                    try await evaluations.withSlot(for: company) {
                        try await client.withTransaction(logger: logger) { connection in
                            try await GroupRequestStore.allowLargeSorts(on: connection, logger: logger)
                            return try await GroupRequestStore.results(
                                cohort: cohort, types: [type], bucket: bucket, from: from, to: last, k: k, on: connection, logger: logger)
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return cells.sorted { ($0.bucketStart, $0.type.code) < ($1.bucketStart, $1.type.code) }
    }

    // MARK: Reads

    public func request(id: UUID, for principal: Principal, logger: Logger) async throws -> GroupRequest {
        let sender = try senderScope(of: principal)
        return try await client.withConnection { connection in
            guard let request = try await GroupRequestStore.request(id: id, sender: sender, on: connection, logger: logger)
            else { throw GroupRequestError.notFound }
            return request
        }
    }

    /// A third party's own requests; an auditor's view of everyone's.
    public func list(for principal: Principal, status: GroupRequest.Status?, cursor: PageCursor?, limit: Int, logger: Logger) async throws
        -> Page<GroupRequest>
    {
        let sender = try senderScope(of: principal)
        let rows = try await client.withConnection { connection in
            try await GroupRequestStore.list(sender: sender, status: status, after: cursor, limit: limit, on: connection, logger: logger)
        }
        return Page(rows: rows, limit: limit) { PageCursor(time: $0.createdAt, id: $0.id) }
    }

    /// Nil (everything) for auditors, the account for third parties; people see no group requests.
    private func senderScope(of principal: Principal) throws -> UUID? {
        switch principal.role {
        case .thirdParty: return principal.accountID
        case .auditor: return nil
        case .user: throw GroupRequestError.wrongRole("Group requests are for third parties and auditors.")
        }
    }

    /// The sender's results: the frozen release of a one-off request; for a subscription, a new release
    /// whenever the figures changed (buckets up to today while it runs, erased people gone).
    public func results(id: UUID, for principal: Principal, logger: Logger) async throws -> GroupRelease {
        guard principal.role == .thirdParty else { throw GroupRequestError.wrongRole("Only the sender reads results here; auditors use /v1/audit.") }
        let request = try await client.withConnection { connection in
            try await GroupRequestStore.request(id: id, sender: principal.accountID, on: connection, logger: logger)
        }
        guard let request else { throw GroupRequestError.notFound }
        guard request.status == .accepted else { throw GroupRequestError.notAccepted }
        guard request.subscription != nil else {
            let latest = try await client.withConnection { try await GroupRequestStore.latestRelease(of: id, on: $0, logger: logger) }
            guard let latest else { throw GroupRequestError.notReleased }
            return latest
        }
        return try await refreshRelease(of: request, logger: logger).release
    }

    /// Recomputes a subscription's results and, when they differ from the latest release, stores them as a
    /// new release and queues `group_request.results_updated` for the sender.
    ///
    /// The computation (on connections of its own, one per type) holds no lock; only the comparison and the
    /// store run under the request's row lock, so concurrent reads and the refresh never store the same new
    /// figures twice, and a reader waiting for the lock never holds a connection another needs to finish.
    /// If the subscription ended or expired while the figures were computed, they are computed again for
    /// the range it now has.
    private enum RefreshOutcome {
        case unchanged(GroupRelease)
        case released(GroupRelease)
        /// The subscription ended or expired meanwhile: its results now stop earlier.
        case rangeChanged(GroupRequest)
    }

    private func refreshRelease(of request: GroupRequest, logger: Logger) async throws -> (release: GroupRelease, isNew: Bool) {
        var request = request
        while true {
            let today = CalendarDate.today
            let cohort = try await client.withConnection { try await GroupRequestStore.cohort(of: request.id, on: $0, logger: logger) }
            let cells = try await cells(of: request, cohort: cohort, today: today, logger: logger)
            let outcome: RefreshOutcome = try await client.withTransaction(logger: logger) { connection in
                guard let current = try await GroupRequestStore.requestLockedForRelease(request.id, on: connection, logger: logger)
                else { throw GroupRequestError.notFound }
                guard current.lastResultDay(today: today) == request.lastResultDay(today: today) else { return .rangeChanged(current) }
                let latest = try await GroupRequestStore.latestRelease(of: request.id, on: connection, logger: logger)
                if let latest, latest.cells.hasSameFigures(as: cells) { return .unchanged(latest) }
                let fresh = try await record(cells, of: current, on: connection, logger: logger)
                try await WebhookOutbox.enqueue(.groupRequestResultsUpdated, to: current.thirdParty.id, requestID: current.id, data: [:],
                                                on: connection, logger: logger)
                return .released(fresh)
            }
            switch outcome {
            case .unchanged(let latest): return (latest, false)
            case .released(let fresh): return (fresh, true)
            case .rangeChanged(let current): request = current
            }
        }
    }

    /// Refreshes the live subscription compared longest ago, if its last comparison is more than `interval`
    /// old (see `GroupResultsRefresh`); false when none is due. The claim marks it compared, so one that
    /// fails to refresh waits its turn again rather than holding up the others.
    func refreshNextDueSubscription(interval: Duration, logger: Logger) async throws -> Bool {
        let claimed = try await client.withConnection { connection in
            try await GroupRequestStore.claimSubscriptionDueForRefresh(checkedBefore: interval, on: connection, logger: logger)
        }
        guard let claimed else { return false }
        let request = try await client.withConnection { try await GroupRequestStore.request(id: claimed, sender: nil, on: $0, logger: logger) }
        guard let request else { return true }  // erased together with its company since the claim
        if try await refreshRelease(of: request, logger: logger).isNew {
            logger.info("group subscription has new results", metadata: ["request.id": "\(request.id)"])
        }
        return true
    }

    /// What was last released, for auditors: the same stored cells the third party received.
    public func releasedResults(id: UUID, for principal: Principal, logger: Logger) async throws -> GroupRelease {
        guard principal.role == .auditor else { throw GroupRequestError.wrongRole("Only auditors read this.") }
        return try await client.withConnection { connection in
            guard try await GroupRequestStore.request(id: id, sender: nil, on: connection, logger: logger) != nil
            else { throw GroupRequestError.notFound }
            guard let latest = try await GroupRequestStore.latestRelease(of: id, on: connection, logger: logger)
            else { throw GroupRequestError.notReleased }
            return latest
        }
    }

    public func endSubscription(id: UUID, by principal: Principal, logger: Logger) async throws -> GroupRequest {
        guard principal.role == .thirdParty else { throw GroupRequestError.wrongRole("Only the sender ends a group subscription.") }
        return try await client.withTransaction(logger: logger) { connection in
            if let ended = try await GroupRequestStore.endSubscription(id: id, sender: principal.accountID, on: connection, logger: logger) {
                try await AuditLog.append(
                    AuditEvent(actorID: principal.accountID.uuidString.lowercased(), actorRole: Role.thirdParty.rawValue,
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
