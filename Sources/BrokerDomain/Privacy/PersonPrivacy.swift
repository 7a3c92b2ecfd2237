import Foundation
import Logging

/// A person's own privacy loss (issue 32): the API's `GET /v1/me/privacy` and the console's *Privacy* page
/// read it here. Only the caller's own loss can be read: there is no way to name anyone else.
package struct PersonPrivacy: Sendable {
    let client: DatabasePool
    let settings: PrivacySettings
    /// Which twelve months count.
    let clock: WallClock

    package init(client: DatabasePool, settings: PrivacySettings, clock: WallClock = .system) {
        self.client = client
        self.settings = settings
        self.clock = clock
    }

    package func loss(of principal: Principal, logger: Logger) async throws -> PersonPrivacyLoss {
        guard principal.role == .user else { throw WrongRole("Only people have a privacy loss of their own.") }
        let months = PersonPrivacyLoss.months(endingAt: clock.now)
        let (first, last) = (months.first!, months.last!)
        let since = Date(timeIntervalSince1970: TimeInterval(first.dayNumber) * 86_400)
        let until = PersonPrivacyLoss.end(of: last)
        let account = principal.accountID
        // One snapshot: a release committing between the reads would otherwise show in the months and not
        // in the requests.
        let (byMonth, requests, peers) = try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            return (
                try await PersonPrivacyLossStore.months(account: account, from: first, through: last, on: connection, logger: logger),
                try await PersonPrivacyLossStore.requests(account: account, from: first, through: last, on: connection, logger: logger),
                try await PrivacyLedgerStore.peerStatisticsLoss(since: since, until: until, on: connection, logger: logger)
            )
        }
        let monthly = months.map { PersonPrivacyLoss.Month(start: $0, loss: byMonth[$0.description] ?? .zero) }
        let total = monthly.reduce(PrivacyLoss.zero) { $0 + $1.loss }
        let attributed = requests.reduce(PrivacyLoss.zero) { $0 + $1.loss }
        return PersonPrivacyLoss(
            cap: PrivacyLoss(rho: settings.personBudget), groupCap: settings.personGroupBudget, peerReserve: PrivacyLoss(rho: settings.peerReserve),
            peerSpentAtMost: peers, months: monthly, requests: requests, unattributed: max(.zero, total - attributed),
            oldestMonthEndsAt: until, delta: GroupRequestService.reportingDelta)
    }
}

extension Services {
    /// Built from the group requests' settings and clock: the person's view of the same cap, over the same
    /// months, as the releases that debit it.
    package var personPrivacy: PersonPrivacy {
        PersonPrivacy(client: client, settings: groupRequests.privacy, clock: groupRequests.clock)
    }
}
