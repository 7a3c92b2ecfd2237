import Foundation
import Logging

/// Peer statistics from shared cells (issue 16): for every closed local day, one noisy cell per sex,
/// ten-year age band and type, computed once through the mechanism and stored; every person's page
/// composes its buckets from the stored cells of their band.
///
/// Why shared cells: figures computed per request, over whatever window and buckets the caller chose, could
/// be differenced (two windows a day apart) and, with k − 1 cheap accounts in one's band, read the one real
/// peer exactly. A stored cell is the same for everyone, is never recomputed (a late upload or an erasure
/// does not revise it), and carries noise calibrated to one person's contribution, so any number of pages
/// built from it is post-processing and reveals nothing more. It also makes the page cheap: reading a
/// band's cells is one primary-key range, however many people the band holds.
///
/// Which days: every local day once it has closed (`ReleaseSchedule`: after the last time zone's day ended
/// and the lateness allowance passed), published by `PeerStatisticsPublishing` newest first as far back as
/// `horizonDays`, or by a request that needs it first. A day too old when it first could have been
/// published (before this feature, or while the server was down that long) is never published.
///
/// What it costs: one cell per type a day describes each person (they are in one band), so a published
/// day costs each person at most `peerCellLoss` × the number of types, written to the ledger as one
/// `peer_statistics` entry per day. `PRIVACY_PEER_RESERVE` sets that aside from every person's cap.
package struct PeerStatistics: Sendable {
    package init(client: DatabasePool, mechanism: CellMechanism, settings: PrivacySettings) {
        self.client = client
        self.mechanism = mechanism
        self.settings = settings
    }

    let client: DatabasePool
    let mechanism: CellMechanism
    let settings: PrivacySettings

    /// How far back days are published at all. Short on purpose: every day that can be published counts
    /// against the reserve (`PrivacySettings.peerDaysPerYear`), so a new server catches up on five weeks,
    /// not a year, and a year's page fills in as days close.
    static let horizonDays = 35
    /// The most days one request publishes before it answers. Each day is one query per type over that
    /// day's rollups; an unbounded number (a ten-year window on a server that has just started) would hold
    /// the request and a pooled connection for minutes. The rest is left to the background loop, and
    /// the request shows the days it has.
    static let onDemandDays = 31

    var schedule: ReleaseSchedule { ReleaseSchedule(latenessHours: settings.latenessHours) }

    /// The newest day that has closed by `now`.
    func lastClosedDay(at now: Date) -> CalendarDate {
        var day = Self.utcDay(of: now)
        while schedule.closes(.day, startingOn: day) > now { day = day.adding(days: -1) }
        return day
    }

    /// The oldest day the background publishes at `now`.
    func firstDayWithinHorizon(at now: Date) -> CalendarDate { Self.utcDay(of: now).adding(days: -Self.horizonDays) }

    /// The UTC day of `date` by arithmetic: on the read path, where a `Calendar` would cost more than the rest.
    static func utcDay(of date: Date) -> CalendarDate {
        CalendarDate(dayNumber: Int((date.timeIntervalSince1970 / 86_400).rounded(.down)))!
    }

    // MARK: Publishing

    /// Computes, noises and stores every cell of `day`, with its ledger entry, in one transaction under the
    /// day's lock; false when the day was already published (by another instance, or a request). The caller
    /// decides that the day has closed.
    @discardableResult
    func publish(_ day: CalendarDate, logger: Logger) async throws -> Bool {
        let mechanism = mechanism
        let settings = settings
        return try await client.withTransaction(logger: logger) { connection in
            try await PeerCellStore.lock(day, on: connection, logger: logger)
            guard try await !PeerCellStore.isPublished(day, on: connection, logger: logger) else { return false }
            var cells: [PeerCell] = []
            for type in SampleType.allCases {
                let calibration = CellCalibration(type: type, loss: settings.peerCellLoss)
                for exact in try await PeerCellStore.exactCells(day: day, type: type, on: connection, logger: logger) {
                    cells.append(
                        PeerCell(
                            sex: exact.sex, ageFrom: exact.ageFrom, type: type,
                            figures: mechanism.noisyFigures(exact.aggregate, calibration: calibration)))
                }
            }
            try await PeerCellStore.store(cells, day: day, on: connection, logger: logger)
            // Company NULL: no company receives it. Not under the ledger's lock, which orders budget
            // decisions: no budget is checked here (each person's share is reserved ahead, `peerReserve`).
            try await PrivacyLedgerStore.record(
                company: nil, request: nil, kind: .peerStatistics, cells: cells.count,
                loss: settings.peerCellLoss * SampleType.allCases.count, on: connection, logger: logger)
            return true
        }
    }

    /// Publishes the newest closed day within the horizon not yet published; false when there is none.
    func publishNewestMissingDay(at now: Date, logger: Logger) async throws -> Bool {
        let first = firstDayWithinHorizon(at: now)
        let last = lastClosedDay(at: now)
        let missing = try await client.withConnection { connection in
            try await PeerCellStore.unpublishedDays(from: first, to: last, limit: 1, on: connection, logger: logger)
        }
        guard let day = missing.first else { return false }
        if try await publish(day, logger: logger) {
            logger.info("peer statistics published", metadata: ["day": "\(day)"])
        }
        return true
    }

    // MARK: Reading

    /// The peer buckets of `group` for `type` from `from` to `to`: the stored cells of the group's band,
    /// composed per bucket (`CellMechanism.compose`). Closed days of the window within the horizon that
    /// are not yet published are published first, the newest `onDemandDays` of them.
    func buckets(
        for group: Statistics.PeerGroup, type: SampleType, from: CalendarDate, to: CalendarDate, bucket: Statistics.Bucket, now: Date,
        logger: Logger
    ) async throws -> [Statistics.PeerBucket] {
        let band = PeerCellStore.band(ageFrom: group.ageFrom)
        let client = client
        let read = {
            try await client.withConnection { connection in
                try await PeerCellStore.cells(sex: group.sex, ageFrom: band, type: type, from: from, to: to, on: connection, logger: logger)
            }
        }
        var cells = try await read()
        // Every published day stores every band's cell, so a closed day without one is unpublished.
        let stored = Set(cells.map(\.day.dayNumber))
        let newest = min(to, lastClosedDay(at: now))
        let oldest = max(from, firstDayWithinHorizon(at: now))
        var missing: [CalendarDate] = []
        var day = newest
        while day >= oldest, missing.count < Self.onDemandDays {
            if !stored.contains(day.dayNumber) { missing.append(day) }
            day = day.adding(days: -1)
        }
        if !missing.isEmpty {
            for day in missing { try await publish(day, logger: logger) }
            cells = try await read()
        }

        var days: [Int: [NoisyCell]] = [:]
        for (day, cell) in cells { days[bucket.start(of: day).dayNumber, default: []].append(cell) }
        let bounds = ContributionBounds.of(type)
        return days.keys.sorted().compactMap { start in
            guard let figures = mechanism.compose(days[start]!, bounds: bounds), let date = CalendarDate(dayNumber: start) else { return nil }
            return Statistics.PeerBucket(
                start: date, people: Int(figures.people.rounded()), mean: figures.mean, p10: figures.p10, p50: figures.p50,
                p90: figures.p90, days: figures.cells, meanMargin95: figures.meanMargin95, peopleMargin95: figures.peopleMargin95)
        }
    }
}
