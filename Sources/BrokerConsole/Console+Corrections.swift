import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird

/// A person correcting their data (issue 29, item 4): deleting one sample, a range of days of one type, or
/// everything of one type, through the same service as `POST /v1/me/samples/deletions`. A range is shown
/// with its count before anything is deleted; the deletion is a second form the person confirms.
extension Console {
    /// The latest samples of a type offered for deletion one by one.
    static let correctableSamples = 20

    func registerCorrectionPages(on router: Router<BrokerRequestContext>) {
        // The latest samples of `?type=`, each with its own delete button, and the range form.
        get("/data/corrections", .role(.user), on: router) { request in
            let principal = try request.caller
            let type = request.query["type"].flatMap(SampleType.init(rawValue:)) ?? .heartRate
            let samples = try await request.services.samples.latest(type, limit: Self.correctableSamples, by: principal, logger: request.logger)
            return request.page(
                "corrections", title: request.t("title.correct-your-data"), values: Self.correctionValues(type: type, samples: samples))
        }

        // Without `confirm`: what would be deleted, counted, and the form that deletes it. With `confirm=yes`
        // (that form, or a one-sample button): the deletion, then back to the list with the count.
        post("/data/corrections", .role(.user), on: router) { request in
            let principal = try request.caller
            let zone = try await Self.zone(of: principal, request)
            let from = Self.bound(request.form["from"], in: zone, end: false)
            let to = Self.bound(request.form["to"], in: zone, end: true)
            let type = request.form["type"]
            let selected = type.flatMap(SampleType.init(rawValue:)) ?? .heartRate
            return try await request.submitting(
                "corrections", title: request.t("title.correct-your-data"),
                values: Self.correctionValues(type: selected, samples: []),
                fieldNames: ConsoleRequest.sameNames("type", "at", "from", "to")
            ) {
                if request.form["confirm"] == "yes" {
                    let (correction, deleted) = try await request.services.samples.correct(
                        type: type, at: request.form["at"], from: from, to: to, by: principal, logger: request.logger)
                    return request.redirect("/data/corrections?type=\(correction.type.rawValue)&count=\(deleted)", notice: "samples-deleted")
                }
                let correction = try SampleCorrection.parse(type: type, at: request.form["at"], from: from, to: to)
                let count = try await request.services.samples.count(of: correction, by: principal, logger: request.logger)
                return request.page(
                    "correction-confirm", title: request.strings.plural("title.delete-samples", count: count),
                    values: [
                        "type": correction.type.rawValue, "typeName": Wording.typeWithUnit(correction.type),
                        "from": correction.from.map(Timestamp.rfc3339) ?? "", "to": correction.to.map(Timestamp.rfc3339) ?? "",
                        "range": Self.rangeWords(correction), "count": count, "plural": count != 1,
                        "deleteWhat": request.strings.plural("corrections.samples", count: count), "nothing": count == 0,
                    ])
            }
        }
    }

    /// The person's time zone, in which the form's days are read (their charts' days).
    private static func zone(of principal: Principal, _ request: ConsoleRequest) async throws -> TimeZone {
        let account = try await request.services.accounts.account(of: principal, logger: request.logger)
        guard case .user(_, _, _, _, let name?) = account.profile, let zone = TimeZone(identifier: name) else { return TimeZone(identifier: "UTC")! }
        return zone
    }

    /// A day of the form (YYYY-MM-DD, the person's) as the first or last instant of that day in RFC 3339; an
    /// exact time (the confirmation's hidden fields) or anything else goes to the service as it is, which
    /// names the field when it is not a time.
    private static func bound(_ text: String?, in zone: TimeZone, end: Bool) -> String? {
        guard let text, let day = CalendarDate(iso: text) else { return text }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let start = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day)) else { return text }
        guard end else { return Timestamp.rfc3339(start) }
        let next = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
        // The day's last microsecond: the bound is inclusive, and samples are stored to the microsecond.
        return Timestamp.rfc3339(next.addingTimeInterval(-0.000_001))
    }

    private static func rangeWords(_ correction: SampleCorrection) -> String {
        switch correction.extent {
        case .one(let at): Wording.strings.format("corrections.range.one", ["at": Wording.time(at)])
        case .range(nil, nil): Wording.strings["corrections.range.all"]
        case .range(let from?, nil): Wording.strings.format("corrections.range.from", ["from": Wording.time(from)])
        case .range(nil, let to?): Wording.strings.format("corrections.range.to", ["to": Wording.time(to)])
        case .range(let from?, let to?): Wording.strings.format("corrections.range.between", ["from": Wording.time(from), "to": Wording.time(to)])
        }
    }

    private static func correctionValues(type: SampleType, samples: [Sample]) -> [String: Any] {
        [
            "types": SampleType.allCases.map { ["value": $0.rawValue, "label": Wording.typeWithUnit($0), "selected": $0 == type] },
            "typeName": Wording.typeWithUnit(type), "type": type.rawValue,
            "samples": samples.map {
                ["at": Timestamp.rfc3339($0.at), "when": Wording.time($0.at), "value": Wording.strings.decimal($0.value), "unit": Wording.unit(type)]
            },
            "hasSamples": !samples.isEmpty,
        ]
    }
}
