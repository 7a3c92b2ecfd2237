import BrokerDomain
import Foundation

/// A person's own privacy loss in the page's language (the API's `summary` is English).
extension Wording {
    /// The template's values for the *Privacy* page.
    static func privacyLoss(_ loss: PersonPrivacyLoss) -> [String: Any] {
        let months = loss.months.map { month -> [String: Any] in
            let share = loss.share(of: month.rho)
            return ["month": monthName(month.start), "rho": rho(month.rho), "share": percent(share), "fraction": fraction(share)]
        }
        let requests = loss.requests.map { request -> [String: Any] in
            [
                "companyName": request.companyName, "rho": rho(request.rho), "share": percent(loss.share(of: request.rho)),
                "request": String(request.requestID.uuidString.lowercased().prefix(8)),
                "contribution": strings["privacyLoss.contribution." + request.contribution.rawValue],
            ]
        }
        return [
            "summary": privacySummary(loss),
            "spentFraction": fraction(loss.spentShare),
            "group": strings.format(
                "privacyLoss.group",
                ["spent": rho(loss.groupSpentRho), "cap": rho(loss.groupCapRho), "share": percent(loss.groupSpentShare)]),
            "reserve": strings.format(
                "privacyLoss.reserve",
                [
                    "reserve": rho(loss.peerReserveRho), "share": percent(loss.peerReserveShare),
                    "spent": rho(loss.peerSpentAtMostRho), "spentShare": percent(loss.peerSpentAtMostShare),
                ]),
            "epsilon": strings.format(
                "privacyLoss.epsilon", ["rho": rho(loss.spentRho), "cap": rho(loss.capRho), "epsilon": strings.decimal(loss.epsilon)]),
            "window": strings.format(
                "privacyLoss.window", ["from": strings.day(loss.countsFrom), "ends": strings.day(loss.oldestMonthEndsAt)]),
            "months": months,
            "requests": requests, "hasRequests": !requests.isEmpty,
            "unattributed": strings.format("privacyLoss.unattributed", ["rho": rho(loss.unattributedRho)]),
            "hasUnattributed": loss.unattributedRho > 0,
        ]
    }

    /// "About 12 % of this year's limit is spent.", in the page's language.
    static func privacySummary(_ loss: PersonPrivacyLoss) -> String {
        if loss.spentRho == 0 { return strings["privacyLoss.summary.nothing"] }
        if loss.spentPercent == 0 { return strings["privacyLoss.summary.belowOne"] }
        return strings.format("privacyLoss.summary.about", ["percent": strings.number(loss.spentPercent)])
    }

    /// A ρ as the ledger keeps it (to a millionth), in the language's decimals.
    static func rho(_ value: Double) -> String {
        value.formatted(.number.precision(.fractionLength(0...6)).grouping(.never).locale(strings.language.locale))
    }

    /// "12 %", "0,4 %": a share of a cap in percent, to one decimal below 10 %.
    static func percent(_ fraction: Double) -> String {
        let value = fraction * 100
        return (value < 10 ? strings.decimal(value) : strings.number(Int(value.rounded()))) + " %"
    }

    /// For a `<meter>`'s value: a plain decimal in every language.
    static func fraction(_ value: Double) -> String { String(format: "%.4f", value) }

    /// "Nov 2026" / "nov 2026".
    static func monthName(_ month: CalendarDate) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(month.dayNumber) * 86_400)
        return date.formatted(
            Date.FormatStyle(date: .omitted, time: .omitted, locale: strings.language.locale, timeZone: TimeZone(identifier: "UTC")!)
                .month(.abbreviated).year())
    }
}
