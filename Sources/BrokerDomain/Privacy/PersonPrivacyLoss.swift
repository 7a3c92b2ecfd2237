import Foundation

/// What the aggregates have cost one person, as they see it (`GET /v1/me/privacy`, the console's *Privacy*
/// page): their yearly cap, what companies' group requests took from it month by month and request by
/// request, and the reserve set aside for peer statistics.
///
/// Everything in it is the person's own or the same for everyone (the cap, the reserve, the peer days
/// published): it has the same shape for every person, always twelve months, so reading it reveals
/// nothing about anyone else.
package struct PersonPrivacyLoss: Sendable, Equatable {
    /// One calendar month of the twelve that count (UTC, as the ledger keeps them).
    package struct Month: Sendable, Equatable {
        /// The month's first day.
        package var start: CalendarDate
        /// What group requests took from the person in that month.
        var loss: PrivacyLoss
        package var rho: Double { loss.rho }
    }

    /// How the person's data went into a group request that cost them something.
    package enum Contribution: String, Sendable {
        /// Into released results: the access log lists the request.
        case results
        /// Only into the noisy size of the request's group (the request was refused as too small, or a
        /// subscription has released nothing yet): the size is a figure about them too, so it is paid for,
        /// but nothing was released that the access log would list.
        case cohortSize
    }

    /// A group request that took something from the person in the twelve months.
    package struct Request: Sendable, Equatable {
        package var requestID: UUID
        /// As the person's access log names it (the name when the results were released, kept after the
        /// company's erasure); for a request the log does not list, the company's name now, or
        /// "Erased company".
        package var companyName: String
        package var contribution: Contribution
        var loss: PrivacyLoss
        package var rho: Double { loss.rho }
    }

    /// `PRIVACY_PERSON_BUDGET`: the whole yearly cap.
    var cap: PrivacyLoss
    /// What group requests may take of it (the cap less the peer reserve).
    var groupCap: PrivacyLoss
    /// `PRIVACY_PEER_RESERVE`.
    var peerReserve: PrivacyLoss
    /// What the peer days published in the twelve months can have cost anyone at most.
    var peerSpentAtMost: PrivacyLoss
    /// Exactly twelve, oldest first, months without a debit included.
    package var months: [Month]
    /// Newest first (by the last month each spent something in).
    package var requests: [Request]
    /// Group loss of the twelve months that is not split by request: debits made before the server kept
    /// them per request. Zero on a server that has always done so.
    var unattributed: PrivacyLoss
    /// When the oldest of the twelve months stops counting: the first moment of the next month (UTC).
    package var oldestMonthEndsAt: Date
    /// The δ the (ε, δ) equivalent is stated at.
    package var delta: Double

    package var capRho: Double { cap.rho }
    package var groupCapRho: Double { groupCap.rho }
    package var peerReserveRho: Double { peerReserve.rho }
    package var peerSpentAtMostRho: Double { peerSpentAtMost.rho }
    package var unattributedRho: Double { unattributed.rho }

    /// The first day that counts.
    package var countsFrom: CalendarDate { months[0].start }

    var groupSpent: PrivacyLoss { months.reduce(.zero) { $0 + $1.loss } }
    /// Group requests' loss and the most the published peer days can have cost.
    var spent: PrivacyLoss { groupSpent + peerSpentAtMost }
    package var groupSpentRho: Double { groupSpent.rho }
    package var spentRho: Double { spent.rho }

    /// Shares are fractions of the whole cap unless they say otherwise, never above 1 (a cap lowered by
    /// configuration can leave past debits above it).
    package func share(of rho: Double) -> Double { Self.fraction(rho, of: cap.rho) }
    package var spentShare: Double { share(of: spentRho) }
    /// Of the group cap: what decides when the person is left out of group requests.
    package var groupSpentShare: Double { Self.fraction(groupSpentRho, of: groupCap.rho) }
    package var peerReserveShare: Double { share(of: peerReserveRho) }
    /// Of the reserve.
    package var peerSpentAtMostShare: Double { Self.fraction(peerSpentAtMostRho, of: peerReserve.rho) }

    /// The spent loss as (ε, δ)-differential privacy.
    package var epsilon: Double { spent.epsilon(delta: delta) }

    /// The spent share in whole percent, as the summary says it: "less than 1" is kept apart from nothing.
    package var spentPercent: Int { Int((spentShare * 100).rounded()) }

    /// The summary in plain English (the API's; the console says it in the page's language).
    package var summary: String {
        if spent == .zero { return "Nothing of this year's limit is spent." }
        if spentPercent == 0 { return "Less than 1 % of this year's limit is spent." }
        return "About \(spentPercent) % of this year's limit is spent."
    }

    static func fraction(_ part: Double, of whole: Double) -> Double {
        guard whole > 0 else { return 0 }
        return min(1, max(0, part / whole))
    }

    /// The twelve calendar months (UTC) that count at `now`, oldest first.
    static func months(endingAt now: Date) -> [CalendarDate] {
        let today = CalendarDate(now, in: .utc)
        return (0..<12).reversed().map { back in
            let index = today.year * 12 + (today.month - 1) - back
            return CalendarDate(year: index / 12, month: index % 12 + 1, day: 1)!
        }
    }

    /// The first moment of the month after `month` (UTC).
    static func end(of month: CalendarDate) -> Date {
        let index = month.year * 12 + month.month
        let next = CalendarDate(year: index / 12, month: index % 12 + 1, day: 1)!
        return Date(timeIntervalSince1970: TimeInterval(next.dayNumber) * 86_400)
    }
}
