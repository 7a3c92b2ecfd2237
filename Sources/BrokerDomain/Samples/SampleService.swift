import Foundation
import Logging
import PostgresNIO

/// The rules of health data: who may upload and read, validation, and statistics windows.
package struct SampleService: Sendable {
    let client: DatabasePool
    package let groupMinCohort: Int
    let peers: PeerStatistics
    /// Today, and how far ahead of it a sample may be.
    let clock: WallClock
    /// Names the person in the audit event of a correction.
    let pseudonymizer: Pseudonymizer

    package init(client: DatabasePool, groupMinCohort: Int, clock: WallClock = .system) {
        self.init(
            client: client,
            peers: PeerStatistics(
                client: client, mechanism: CellMechanism(noise: SecureNoise(), minimumPeople: groupMinCohort), settings: PrivacySettings()),
            clock: clock)
    }

    /// Peers' figures come through `peers`, whose mechanism holds k (`GROUP_MIN_COHORT`) and the noise.
    package init(client: DatabasePool, peers: PeerStatistics, pseudonymizer: Pseudonymizer? = nil, clock: WallClock = .system) {
        self.clock = clock
        self.client = client
        self.groupMinCohort = peers.mechanism.minimumPeople
        self.peers = peers
        self.pseudonymizer = pseudonymizer ?? Pseudonymizer(client: client)
    }

    /// Validates the whole batch, then stores it in one transaction. `timeZone` is the device's: adopted as
    /// the person's when they have none yet, in the same transaction (so this batch already lands on local days).
    package func upload(_ entries: [SampleBatch.Entry], timeZone: String? = nil, by principal: Principal, logger: Logger)
        async throws -> SampleStore.UploadResult
    {
        guard principal.role == .user else { throw SampleError.notAUser }
        // A bad zone is listed with the samples' problems, first; either refuses the whole upload.
        let zoneErrors = timeZone.map { TimeZoneName.isValid($0) ? [] : [FieldError(field: "timeZone", message: TimeZoneName.message)] } ?? []
        switch SampleBatch.validate(entries, now: clock.now) {
        case .failure(.invalid(let errors)): throw SampleError.invalid(zoneErrors + errors)
        case .failure(let error): throw error
        case .success(let valid):
            guard zoneErrors.isEmpty else { throw SampleError.invalid(zoneErrors) }
            // A phone's upload alone: one statement, no transaction around it, unless it must be stored with more.
            if timeZone == nil,
                let stored = try await client.withConnection({
                    try await SampleStore.ingestAlone(valid, for: principal.accountID, on: $0, logger: logger)
                })
            {
                return stored
            }
            // `timeZone` becomes the person's first if they have none (see `TimeZoneStore`), in the batch's transaction.
            return try await client.withTransaction(logger: logger) { connection in
                if let timeZone {
                    try await TimeZoneStore.adoptIfUnknown(timeZone, for: principal.accountID, on: connection, logger: logger)
                }
                return try await SampleStore.ingest(valid, for: principal.accountID, on: connection, logger: logger).upload
            }
        }
    }

    package func list(
        _ principal: Principal, type: SampleType?, from: String?, to: String?, page: PageRequest, logger: Logger
    ) async throws -> Page<Sample> {
        guard principal.role == .user else { throw SampleError.notAUser }
        var errors: [FieldError] = []
        let from = parseTime(from, field: "from", into: &errors)
        let to = parseTime(to, field: "to", into: &errors)
        let (limit, after) = page.read({ SampleCursor($0) }, into: &errors)
        guard errors.isEmpty else { throw SampleError.invalid(errors) }
        let (samples, next) = try await client.withConnection { connection in
            try await SampleStore.list(
                userID: principal.accountID, type: type, from: from, to: to, after: after, limit: limit, on: connection, logger: logger)
        }
        return Page(items: samples, next: next.map(\.pageCursor))
    }

    /// The types the person has readings of in the default statistics window (the last 30 days).
    package func typesWithData(_ principal: Principal, logger: Logger) async throws -> [SampleType] {
        guard principal.role == .user else { throw SampleError.notAUser }
        return try await client.withConnection { connection in
            guard let account = try await AccountStore.account(id: principal.accountID, on: connection, logger: logger),
                case .user(_, _, _, _, let timeZone) = account.profile
            else { throw SampleError.notAUser }
            let today = CalendarDate(clock.now, in: Self.zone(timeZone))
            return try await StatisticsStore.types(
                userID: principal.accountID, from: today.adding(days: -29), to: today, on: connection, logger: logger)
        }
    }

    package func statistics(
        _ principal: Principal, type: SampleType, from: String?, to: String?, bucket: Statistics.Bucket, logger: Logger
    ) async throws -> Statistics {
        guard principal.role == .user else { throw SampleError.notAUser }
        let account = try await client.withConnection { try await AccountStore.account(id: principal.accountID, on: $0, logger: logger) }
        guard let account,
            case .user(_, _, let birthText, let sexText, let timeZone) = account.profile,
            let birthDate = CalendarDate(iso: birthText), let sex = Sex(rawValue: sexText)
        else { throw SampleError.notAUser }
        // The window's days are the person's (their rollups are); the age band is judged on the server's day,
        // the same for everyone, as the band's birth dates are.
        let zone = Self.zone(timeZone)
        let today = clock.today
        var errors: [FieldError] = []
        let last = parseDay(to, field: "to", into: &errors) ?? CalendarDate(clock.now, in: zone)
        let first = parseDay(from, field: "from", into: &errors) ?? last.adding(days: -29)
        if first > last { errors.append(FieldError(field: "from", message: "must not be after to")) }
        if last.dayNumber - first.dayNumber + 1 > bucket.maximumWindowDays {
            errors.append(
                FieldError(
                    field: "from", message: "with \(bucket.rawValue) buckets the window may span at most \(bucket.maximumWindowDays) days"))
        }
        guard errors.isEmpty else { throw SampleError.invalid(errors) }
        let group = Statistics.PeerGroup(sex: sex, birthDate: birthDate, today: today)
        async let own = client.withConnection { connection in
            try await StatisticsStore.own(userID: account.id, type: type, from: first, to: last, bucket: bucket, on: connection, logger: logger)
        }
        // Peers: the stored cells of the caller's band (the caller is in them, as everyone is in their own).
        async let peerBuckets = peers.buckets(for: group, type: type, from: first, to: last, bucket: bucket, now: clock.now, logger: logger)
        let (ownBuckets, shown) = try await (own, peerBuckets)
        return Statistics(
            type: type, timeZone: timeZone ?? "UTC", bucket: bucket, own: ownBuckets, group: group, peersAvailable: !shown.isEmpty,
            peerBuckets: shown)
    }

    /// The zone of a person's days: theirs, or UTC while it is not known.
    static func zone(_ identifier: String?) -> TimeZone {
        identifier.flatMap(TimeZone.init(identifier:)) ?? .utc
    }

    private func parseTime(_ text: String?, field: String, into errors: inout [FieldError]) -> Date? {
        guard let text else { return nil }
        if let date = Timestamp.parse(text) { return date }
        errors.append(FieldError(field: field, message: "must be an RFC 3339 time such as 2026-03-01T08:00:00Z"))
        return nil
    }

    private func parseDay(_ text: String?, field: String, into errors: inout [FieldError]) -> CalendarDate? {
        guard let text else { return nil }
        if let day = CalendarDate(iso: text) { return day }
        errors.append(FieldError(field: field, message: "must be a date as YYYY-MM-DD"))
        return nil
    }
}
