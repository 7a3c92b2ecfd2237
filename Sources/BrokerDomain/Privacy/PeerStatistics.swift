import Foundation
import Logging
import PostgresNIO

/// Peer statistics from shared monthly cells (issues 16 and 32): for every closed calendar month, one noisy
/// cell per sex, ten-year age band and type, computed once through the mechanism and stored; every person's
/// page reads its buckets' figures from the stored cells of their band.
///
/// Why shared cells: figures computed per request, over whatever window and buckets the caller chose, could
/// be differenced (two windows a day apart) and, with k − 1 cheap accounts in one's band, read the one real
/// peer exactly. A stored cell is the same for everyone, is never recomputed (a late upload or an erasure
/// does not revise it), and carries noise calibrated to one person's contribution, so any number of pages
/// built from it is post-processing and reveals nothing more.
///
/// Why months (issue 32): the reserve spread over 402 days × 17 types left a day's cell ρ ≈ 0.000073, and its
/// median was off by up to 40 beats/min. Over 15 months a cell has 27 times the loss, and a person's month
/// figure (their mean over the month's days) varies less between people than one day's; each cell releases
/// only a count and p10, p50 and p90 (no mean: its sum's noise could not meet the targets at this budget).
/// docs/privacy.md has the arithmetic and the measured accuracy.
///
/// Which months: every calendar month once it has closed (`ReleaseSchedule`: after the last time zone's day
/// of it ended and the lateness allowance passed), published by `PeerStatisticsPublishing` newest first
/// within `horizonMonths`, or by a request that needs it first. A month too old when it first could have been
/// published (before this feature, or while the server was down that long) is never published.
///
/// What it costs: one cell per type a month describes each person (they are in one band), so a published
/// month costs each person at most `peerCellLoss` × the number of types, written to the ledger as one
/// `peer_statistics` entry per month. `PRIVACY_PEER_RESERVE` sets that aside from every person's cap.
package struct PeerStatistics: Sendable {
    package init(client: DatabasePool, mechanism: CellMechanism, settings: PrivacySettings, reads: DatabaseReads? = nil) {
        self.client = client
        self.mechanism = mechanism
        self.settings = settings
        self.reads = reads ?? DatabaseReads(primary: client)
    }

    let client: DatabasePool
    /// Where a month's exact cells are read before its publishing transaction: a standby recent enough
    /// (`DatabaseReads.onStandby`), else the primary inside the transaction.
    let reads: DatabaseReads
    let mechanism: CellMechanism
    let settings: PrivacySettings

    /// How many of the newest closed months are published at all: the last closed one and the one before.
    /// Short on purpose: every month that can be published counts against the reserve
    /// (`PrivacySettings.peerMonthsPerYear`), so a new server catches up on two months, not a year.
    static let horizonMonths = 2

    /// The first day of the newest month that has closed by `now`.
    func lastClosedMonth(at now: Date) -> CalendarDate { Self.lastClosedMonth(at: now, latenessHours: settings.latenessHours) }

    package static func lastClosedMonth(at now: Date, latenessHours: Int) -> CalendarDate {
        let schedule = ReleaseSchedule(latenessHours: latenessHours)
        var month = Statistics.Bucket.month.start(of: utcDay(of: now))
        while schedule.closes(.month, startingOn: month) > now { month = Self.month(before: month) }
        return month
    }

    /// The months the background and requests may publish at `now`, newest first.
    func monthsWithinHorizon(at now: Date) -> [CalendarDate] {
        var months = [lastClosedMonth(at: now)]
        while months.count < Self.horizonMonths { months.append(Self.month(before: months.last!)) }
        return months
    }

    static func month(before month: CalendarDate) -> CalendarDate {
        month.month == 1 ? CalendarDate(year: month.year - 1, month: 12, day: 1)! : CalendarDate(year: month.year, month: month.month - 1, day: 1)!
    }

    /// The UTC day of `date` by arithmetic: on the read path, where a `Calendar` would cost more than the rest.
    static func utcDay(of date: Date) -> CalendarDate {
        CalendarDate(dayNumber: Int((date.timeIntervalSince1970 / 86_400).rounded(.down)))!
    }

    // MARK: Publishing

    /// What `publish` did.
    enum Publication: Equatable {
        case published
        /// Another instance, or a request, published it first.
        case alreadyPublished
        /// The peer statistics published in the last twelve calendar months leave less of the reserve than the
        /// month costs: it waits (see `publish`).
        case reserveSpent
    }

    /// Computes, noises and stores every cell of `month`, with its ledger entry, in one transaction under the
    /// month's lock; the caller decides that the month has closed.
    ///
    /// The reserve is enforced, not only argued: under the ledger's lock, the `peer_statistics` entries of the
    /// last twelve calendar months plus this month's cost must fit in `PRIVACY_PEER_RESERVE`. In steady state
    /// that always holds (at most 15 months in any 366 days, each at a fifteenth of the reserve); it matters
    /// when the arithmetic's assumptions do not hold, e.g. a server upgraded from daily peer cells, whose
    /// entries still count for a year, or a changed lateness that moves month closings.
    ///
    /// With a standby recent enough (issue 34), the exact cells (the costly part: every rollup of the month)
    /// are read there first, after noting the consent version on the same connection. They are used only if
    /// the primary's version is still the same under the locks: a type no longer shared or an account erased
    /// since is never counted; otherwise they are read again on the primary, in the transaction. Rollups
    /// uploaded within the staleness bound may be missing, as a late upload after publishing is.
    @discardableResult
    func publish(_ month: CalendarDate, logger: Logger) async throws -> Publication {
        let mechanism = mechanism
        let settings = settings
        let cost = settings.peerCellLoss * SampleType.allCases.count
        let early = try await reads.onStandby(logger: logger) { connection in
            let version = try await ConsentVersionStore.version(on: connection, logger: logger)
            return (version: version, cells: try await Self.exactCells(of: month, on: connection, logger: logger))
        }
        return try await client.withTransaction(logger: logger) { connection in
            try await PeerCellStore.lock(month, on: connection, logger: logger)
            guard try await !PeerCellStore.isPublished(month, on: connection, logger: logger) else { return .alreadyPublished }
            // After the month's lock (always in this order): two months publishing at once see each other's entry.
            try await PrivacyLedgerStore.lock(on: connection, logger: logger)
            let spent = try await PrivacyLedgerStore.peerStatisticsLoss(on: connection, logger: logger)
            guard spent + cost <= PrivacyLoss(rho: settings.peerReserve) else { return .reserveSpent }
            let exactCells =
                if let early, try await early.version == ConsentVersionStore.version(on: connection, logger: logger) {
                    early.cells
                } else {
                    try await Self.exactCells(of: month, on: connection, logger: logger)
                }
            var cells: [PeerCell] = []
            for (type, exact) in exactCells {
                let calibration = CellCalibration(type: type, loss: settings.peerCellLoss, split: .peerCell)
                cells.append(
                    PeerCell(
                        sex: exact.sex, ageFrom: exact.ageFrom, type: type,
                        figures: mechanism.peerFigures(exact.aggregate, calibration: calibration)))
            }
            try await PeerCellStore.store(cells, month: month, on: connection, logger: logger)
            // Company NULL: no company receives it.
            try await PrivacyLedgerStore.record(
                company: nil, request: nil, kind: .peerStatistics, cells: cells.count, loss: cost, on: connection, logger: logger)
            return .published
        }
    }

    /// Every type's exact cells of `month`, before any noise.
    private static func exactCells(of month: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws
        -> [(type: SampleType, cell: (sex: Sex, ageFrom: Int, aggregate: CellAggregate))]
    {
        var cells: [(type: SampleType, cell: (sex: Sex, ageFrom: Int, aggregate: CellAggregate))] = []
        for type in SampleType.allCases {
            for exact in try await PeerCellStore.exactCells(month: month, type: type, on: connection, logger: logger) {
                cells.append((type, exact))
            }
        }
        return cells
    }

    /// Publishes the newest closed month within the horizon not yet published; false when there is none.
    func publishNewestMissingMonth(at now: Date, logger: Logger) async throws -> Bool {
        let months = monthsWithinHorizon(at: now)
        let published = try await client.withConnection { try await PeerCellStore.published(months, on: $0, logger: logger) }
        guard let month = months.first(where: { !published.contains($0) }) else { return false }
        switch try await publish(month, logger: logger) {
        case .published:
            logger.info("peer statistics published", metadata: ["month": "\(month)"])
            return true
        case .alreadyPublished:
            return true
        case .reserveSpent:
            // Until older entries leave the twelve months: look again at the next interval, not at once.
            logger.info("peer statistics wait for the reserve", metadata: ["month": "\(month)"])
            return false
        }
    }

    // MARK: Reading

    /// The peer buckets of `group` for `type` from `from` to `to`: each bucket carries the figures of the
    /// stored cell of the group's band for the month holding the bucket's start (so a day or week bucket
    /// shows its month's figures; one after the last closed month shows that month's), when that cell's noisy
    /// count reaches k. Months of the window within the
    /// horizon that are not yet published are published first (at most `horizonMonths`, so a request
    /// waits for at most that many).
    func buckets(
        for group: Statistics.PeerGroup, type: SampleType, from: CalendarDate, to: CalendarDate, bucket: Statistics.Bucket, now: Date,
        logger: Logger
    ) async throws -> [Statistics.PeerBucket] {
        let band = PeerCellStore.band(ageFrom: group.ageFrom)
        let starts = bucket.starts(from: from, to: to)
        guard let firstStart = starts.first, let lastStart = starts.last else { return [] }
        // Buckets after the last closed month (this month, whose figures do not exist yet) show that month's
        // figures, saying so in `month`: a person's recent days then have a line to compare with, and it is
        // the newest figure there is. So that month is read even when the window starts after it.
        let closed = lastClosedMonth(at: now)
        let firstMonth = min(Statistics.Bucket.month.start(of: firstStart), closed)
        let lastMonth = Statistics.Bucket.month.start(of: lastStart)
        let client = client
        let read = {
            try await client.withConnection { connection in
                try await PeerCellStore.cells(
                    sex: group.sex, ageFrom: band, type: type, from: firstMonth, to: lastMonth, on: connection, logger: logger)
            }
        }
        var cells = try await read()
        // Every published month stores every band's cell, so a month of the horizon without one is unpublished.
        let stored = Set(cells.map(\.month))
        let missing = monthsWithinHorizon(at: now).filter { (firstMonth...lastMonth).contains($0) && !stored.contains($0) }
        if !missing.isEmpty {
            for month in missing { try await publish(month, logger: logger) }
            cells = try await read()
        }

        var shown: [CalendarDate: ShownPeerFigures] = [:]
        for (month, figures) in cells {
            if let figures = mechanism.shown(figures, type: type) { shown[month] = figures }
        }
        return starts.compactMap { start in
            let month = min(Statistics.Bucket.month.start(of: start), closed)
            guard let figures = shown[month] else { return nil }
            return Statistics.PeerBucket(
                start: start, month: month, people: figures.people, peopleMargin95: figures.peopleMargin95, p10: figures.p10?.value,
                p50: figures.p50?.value, p90: figures.p90?.value, p10Margin95: figures.p10?.margin, p50Margin95: figures.p50?.margin,
                p90Margin95: figures.p90?.margin)
        }
    }
}
