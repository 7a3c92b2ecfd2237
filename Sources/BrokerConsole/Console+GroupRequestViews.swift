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
        // Mustache treats an empty string as true: absent keys, not empty values, hide a section.
        var item: [String: Any] = [
            "id": request.id.uuidString.lowercased(),
            "purpose": request.purpose,
            "purposeCode": request.purposeCode.code,
            "purposeDisplay": request.purposeCode.display,
            "companyName": request.thirdParty.companyName,
            "types": request.types.map(Wording.typeWithUnit).joined(separator: ", "),
            "demographics": [
                request.demographics.sex.map { $0 == .female ? "women" : "men" } ?? "everyone",
                request.demographics.ageMin.map { "from \($0)" }, request.demographics.ageMax.map { "to \($0) years" },
            ].compactMap { $0 }.joined(separator: " "),
            "window": "\(request.windowFrom) to \(request.windowTo), by \(request.bucket.rawValue)",
            "status": request.status.rawValue,
            "isAccepted": request.status == .accepted,
            "refusalReason": Wording.refusalReason(request.refusalReason),
            "cohortSize": request.cohortSize.map { "about \($0) (a noisy count)" } ?? "",
            "createdAt": Wording.time(request.createdAt),
            "canStop": request.subscription?.status == .active,
        ]
        if !request.filters.isEmpty {
            item["filters"] = request.filters.map(Wording.filter).joined(separator: "; ")
        }
        return item
    }

    static func resultRows(_ release: GroupRelease) -> [[String: Any]] {
        release.cells.map { cell in
            [
                "bucketStart": cell.bucketStart, "type": Wording.typeWithUnit(cell.type), "suppressed": cell.suppressed,
                "people": cell.people.map(String.init) ?? "", "mean": cell.mean.map(HealthChart.number) ?? "",
                "p10": cell.p10.map(HealthChart.number) ?? "", "p50": cell.p50.map(HealthChart.number) ?? "",
                "p90": cell.p90.map(HealthChart.number) ?? "", "margin": cell.accuracy?.meanMargin95.map(HealthChart.number) ?? "",
            ]
        }
    }

    /// The company's budget in a sentence.
    static func budgetSentence(_ budget: CompanyBudget) -> String {
        "Your privacy budget: ρ \(HealthChart.number(budget.remainingRho)) of \(HealthChart.number(budget.limitRho)) left for the last "
            + "\(budget.periodDays) days" + (budget.renewsAt.map { "; the oldest spending stops counting on \(Wording.time($0))." } ?? ".")
    }

    static func csvDownload(_ body: HTTPBody, filename: String) -> Response {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "text/csv; charset=utf-8"
        head.headerFields[.contentDisposition] = #"attachment; filename="\#(filename)""#
        return Response(openAPI: head, body: body)
    }
}
