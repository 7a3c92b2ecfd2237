import BrokerDomain
import BrokerHTTP
import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIRuntime

/// How a group request and its released results look on a page; the companies' and the auditors' pages
/// show them alike.
extension Console {
    static func groupItem(_ request: GroupRequest) -> [String: Any] {
        let strings = Wording.strings
        // Mustache treats an empty string as true: absent keys, not empty values, hide a section.
        var item: [String: Any] = [
            "id": request.id.uuidString.lowercased(),
            "purpose": request.purpose,
            "purposeCode": request.purposeCode.code,
            "purposeDisplay": request.purposeCode.display,
            "companyName": request.thirdParty.companyName,
            "types": request.types.map(Wording.typeWithUnit).joined(separator: ", "),
            "demographics": [
                strings[request.demographics.sex.map { $0 == .female ? "group.women" : "group.men" } ?? "group.everyone"],
                request.demographics.ageMin.map { strings.format("group.ageFrom", ["age": String($0)]) },
                request.demographics.ageMax.map { strings.format("group.ageTo", ["age": String($0)]) },
            ].compactMap { $0 }.joined(separator: " "),
            "window": strings.format(
                "group.window",
                [
                    "from": strings.day(request.windowFrom), "to": strings.day(request.windowTo),
                    "bucket": strings["bucket." + request.bucket.rawValue],
                ]),
            "status": request.status.rawValue,
            "statusWords": strings["groupStatus." + request.status.rawValue],
            "isAccepted": request.status == .accepted,
            "refusalReason": Wording.refusalReason(request.refusalReason),
            "cohortSize": request.cohortSize.map { strings.format("group.cohortSize", ["count": strings.number($0)]) } ?? "",
            "createdAt": Wording.time(request.createdAt),
            "canStop": request.subscription?.status == .active,
        ]
        if !request.filters.isEmpty {
            item["filters"] = request.filters.map(Wording.filter).joined(separator: "; ")
        }
        return item
    }

    static func resultRows(_ release: GroupRelease) -> [[String: Any]] {
        let strings = Wording.strings
        return release.cells.map { cell in
            [
                "bucketStart": cell.bucketStart, "type": Wording.typeWithUnit(cell.type), "suppressed": cell.suppressed,
                "people": cell.people.map(strings.number) ?? "", "mean": cell.mean.map(strings.decimal) ?? "",
                "p10": cell.p10.map(strings.decimal) ?? "", "p50": cell.p50.map(strings.decimal) ?? "",
                "p90": cell.p90.map(strings.decimal) ?? "", "margin": cell.accuracy?.meanMargin95.map(strings.decimal) ?? "",
            ]
        }
    }

    /// The company's budget in a sentence, and what it may take from each person (its share of their cap).
    static func budgetSentence(_ budget: CompanyBudget) -> String {
        let strings = Wording.strings
        let values = [
            "remaining": strings.decimal(budget.remainingRho), "limit": strings.decimal(budget.limitRho), "days": strings.number(budget.periodDays),
            "renewsAt": Wording.time(budget.renewsAt),
        ]
        let locale = strings.language.locale
        // ρ to three significant digits: a share of a small cap (0.0333) must not read as 0.
        let rho = FloatingPointFormatStyle<Double>.number.precision(.significantDigits(1...3)).grouping(.never).locale(locale)
        let share = strings.format(
            "budget.share",
            [
                "share": budget.personShareRho.formatted(rho), "cap": budget.personCapRho.formatted(rho),
                "percent": budget.personShareOfCap.formatted(.percent.precision(.fractionLength(0...1)).locale(locale)),
            ])
        return strings.format(budget.renewsAt == nil ? "budget.sentence" : "budget.sentenceRenews", values) + " " + share
    }

    static func csvDownload(_ body: HTTPBody, filename: String) -> Response {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "text/csv; charset=utf-8"
        head.headerFields[.contentDisposition] = #"attachment; filename="\#(filename)""#
        return Response(openAPI: head, body: body)
    }
}
