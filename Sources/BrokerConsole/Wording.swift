import BrokerDomain
import BrokerHTTP
import Foundation

/// How the console says things to people: data types in plain words with units, dates, durations, roles.
enum Wording {
    /// The page's words (`ConsoleStrings.current`, set per request in `Console.serve`).
    static var strings: ConsoleStrings { ConsoleStrings.current }

    static func typeName(_ type: SampleType) -> String { strings["type." + type.rawValue] }

    /// "Heart rate (beats/min)".
    static func typeWithUnit(_ type: SampleType) -> String { "\(typeName(type)) (\(unit(type)))" }

    /// A type's unit as the language writes it ("beats/min", "battiti/min"); `SampleType.unit` is the API's.
    static func unit(_ type: SampleType) -> String { strings["unit." + type.rawValue] }

    /// The people a person is compared with: "women aged 30–39", "donne tra 30 e 39 anni".
    static func peerGroup(_ group: Statistics.PeerGroup) -> String {
        strings.format(
            group.sex == .female ? "peers.women" : "peers.men", ["from": strings.number(group.ageFrom), "to": strings.number(group.ageTo)])
    }

    /// "Heart rate (beats/min)", or "Position (GPS track)".
    static func typeWithUnit(_ type: RequestedType) -> String {
        switch type {
        case .sample(let sample): typeWithUnit(sample)
        case .position: strings["type.position"]
        }
    }

    /// What a single request may ask for: the sample types, then positions.
    static func requestTypeOptions(selected: [String]) -> [[String: Any]] {
        typeOptions(selected: selected) + [["value": "position", "label": strings["type.position"], "checked": selected.contains("position")]]
    }

    /// A request's coded purpose in the reader's words (`PurposeOfUse.plainWords` is the English).
    static func purpose(_ purpose: PurposeOfUse) -> String { strings["purpose." + purpose.code] }

    /// The purposes a company may code its request with, as a select's options: the plain words a person
    /// reads, then HL7's code. A first, empty option makes the company choose (the code is required).
    static func purposeOptions(selected: String?) -> [[String: Any]] {
        [["value": "", "label": strings["form.choose"], "selected": (selected ?? "").isEmpty]]
            + PurposeOfUse.allCases.map {
                ["value": $0.code, "label": "\(purpose($0)) (\($0.code))", "selected": selected == $0.code]
            }
    }

    /// The data types as checkbox options, `checked` for those in `selected`.
    static func typeOptions(selected: [String]) -> [[String: Any]] {
        SampleType.allCases.map {
            ["value": $0.rawValue, "label": typeWithUnit($0), "checked": selected.contains($0.rawValue)]
        }
    }

    /// The API's `F`/`M`; the words too, for a form filled in by a script or an older page.
    static func sexCode(_ text: String?) -> String? {
        switch text?.lowercased() {
        case "female"?, "f"?: "F"
        case "male"?, "m"?: "M"
        default: text
        }
    }

    static func roleName(_ role: Role) -> String { strings["role." + role.rawValue] }

    static func roleNamePlural(_ role: Role) -> String { strings["role.plural." + role.rawValue] }

    /// A finish time: "1:02:05" or "42:17".
    static func raceTime(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, rest) = (total / 3600, total % 3600 / 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    /// "27 Nov 2026, 14:05 UTC" / "27 nov 2026, 14:05 UTC", in the page's language.
    static func time(_ date: Date?) -> String { strings.time(date) }

    /// `YYYY-MM-DD`, for a date field's value (an `<input type="date">` reads nothing else).
    static func day(_ date: Date?) -> String { date.map { String(Timestamp.rfc3339($0).prefix(10)) } ?? "" }

    /// What a single request covers, in time.
    static func window(from: Date?, to: Date?) -> String {
        switch (from, to) {
        case (nil, nil): strings["window.all"]
        case (let from?, nil): strings.format("window.from", ["from": strings.day(from)])
        case (nil, let to?): strings.format("window.to", ["to": strings.day(to)])
        case (let from?, let to?): strings.format("window.between", ["from": strings.day(from), "to": strings.day(to)])
        }
    }

    /// What a person granted, in plain words: "Heart rate (beats/min); your data from 2 Mar 2026; once".
    static func grant(_ terms: ConsentTerms) -> String {
        let duration = terms.subscriptionDays.map { strings.plural("grant.days", count: $0) } ?? strings["grant.once"]
        return "\(terms.types.map(typeWithUnit).joined(separator: ", ")); \(window(from: terms.windowFrom, to: terms.windowTo)); \(duration)"
    }

    static func duration(subscriptionDays days: Int?) -> String {
        guard let days else { return strings["duration.once"] }
        return strings.plural("duration.days", count: days)
    }

    /// "heart rate 60–100 beats/min on average"; a filter without bounds only asks for data of that type.
    static func filter(_ filter: GroupRequest.Filter) -> String {
        let values = [
            "name": typeName(filter.type).lowercased(), "unit": unit(filter.type),
            "min": filter.min.map(strings.decimal) ?? "", "max": filter.max.map(strings.decimal) ?? "",
        ]
        switch (filter.min, filter.max) {
        case (nil, nil): return strings.format("filter.any", values)
        case (.some, nil): return strings.format("filter.min", values)
        case (nil, .some): return strings.format("filter.max", values)
        case (.some, .some): return strings.format("filter.between", values)
        }
    }

    static func refusalReason(_ reason: GroupRequest.RefusalReason?) -> String {
        switch reason {
        case .cohortBelowThreshold?: strings["refusal.cohortBelowThreshold"]
        case .cohortTooSimilar?: strings["refusal.cohortTooSimilar"]
        case nil: ""
        }
    }

    /// An access-log entry's kind, in the log's "What" column.
    static func accessKind(_ kind: AccessLogEntry.Kind) -> String {
        switch kind {
        case .single: strings["access.single"]
        case .group: strings["access.group"]
        case .correction: strings["access.correction"]
        }
    }

    /// The notices `?notice=` may name (`notice.<key>` in the catalogs): a fixed set, so a link can never put
    /// its own text on a page.
    static let noticeKeys: Set<String> = [
        "signed-in", "run-created", "run-changed", "run-cancelled", "run-joined", "run-left", "run-checked-in", "run-zone", "signed-out",
        "accepted", "accepted-part", "refused", "stopped", "blocked", "unblocked", "sharing-saved", "password-changed",
        "password-changed-keys-kept", "password-changed-keys-revoked", "time-zone-changed", "request-sent", "cancelled", "webhook-saved",
        "webhook-removed", "api-key-revoked", "subscription-ended", "samples-deleted", "language-changed",
        "notifications-saved", "second-factor-required", "second-factor-disabled", "password-reset",
    ]
}
