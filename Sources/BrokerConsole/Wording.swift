import BrokerDomain
import BrokerHTTP
import Foundation

/// How the console says things to people: data types in plain words with units, dates, durations, roles.
enum Wording {
    static func typeName(_ type: SampleType) -> String {
        switch type {
        case .heartRate: "Heart rate"
        case .systolicPressure: "Blood pressure, systolic"
        case .diastolicPressure: "Blood pressure, diastolic"
        case .oxygenSaturation: "Oxygen saturation"
        case .stepCount: "Steps"
        case .distanceWalkingRunning: "Distance walked or run"
        case .activeEnergyBurned: "Active energy burned"
        case .standingHours: "Hours standing"
        case .sleepingHours: "Hours of sleep"
        case .weight: "Weight"
        case .height: "Height"
        case .bodyTemperature: "Body temperature"
        case .respiratoryRate: "Respiratory rate"
        case .restingHeartRate: "Resting heart rate"
        case .heartRateVariability: "Heart rate variability (SDNN)"
        case .bloodGlucose: "Blood glucose"
        case .vo2Max: "VO₂ max"
        }
    }

    /// "Heart rate (beats/min)".
    static func typeWithUnit(_ type: SampleType) -> String { "\(typeName(type)) (\(type.unit))" }

    /// "Heart rate (beats/min)", or "Position (GPS track)".
    static func typeWithUnit(_ type: RequestedType) -> String {
        switch type {
        case .sample(let sample): typeWithUnit(sample)
        case .position: "Position (GPS track)"
        }
    }

    /// What a single request may ask for: the sample types, then positions.
    static func requestTypeOptions(selected: [String]) -> [[String: Any]] {
        typeOptions(selected: selected) + [["value": "position", "label": "Position (GPS track)", "checked": selected.contains("position")]]
    }

    /// The purposes a company may code its request with, as a select's options: the plain words a person
    /// reads, then HL7's code. A first, empty option makes the company choose (the code is required).
    static func purposeOptions(selected: String?) -> [[String: Any]] {
        [["value": "", "label": "Choose…", "selected": (selected ?? "").isEmpty]]
            + PurposeOfUse.allCases.map {
                ["value": $0.code, "label": "\($0.plainWords) (\($0.code))", "selected": selected == $0.code]
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

    static func roleName(_ role: Role) -> String {
        switch role {
        case .user: "a person"
        case .thirdParty: "a company"
        case .auditor: "an auditor"
        }
    }

    static func roleNamePlural(_ role: Role) -> String {
        switch role {
        case .user: "people sharing their data"
        case .thirdParty: "companies"
        case .auditor: "auditors"
        }
    }

    /// "2026-11-21 14:05 UTC": unambiguous in every locale, and the server's clock zone.
    /// A finish time: "1:02:05" or "42:17".
    static func raceTime(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, rest) = (total / 3600, total % 3600 / 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    static func time(_ date: Date?) -> String {
        guard let date else { return "" }
        let text = Timestamp.rfc3339(date)
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + " UTC"
    }

    static func day(_ date: Date?) -> String { date.map { String(Timestamp.rfc3339($0).prefix(10)) } ?? "" }

    /// What a single request covers, in time.
    static func window(from: Date?, to: Date?) -> String {
        switch (from, to) {
        case (nil, nil): "all your data"
        case (let from?, nil): "your data from \(day(from))"
        case (nil, let to?): "your data until \(day(to))"
        case (let from?, let to?): "your data from \(day(from)) to \(day(to))"
        }
    }

    /// What a person granted, in plain words: "Heart rate (beats/min); your data from 2026-03-02; once".
    static func grant(_ terms: ConsentTerms) -> String {
        let duration = terms.subscriptionDays.map { "new data for \($0) day\($0 == 1 ? "" : "s")" } ?? "once"
        return "\(terms.types.map(typeWithUnit).joined(separator: ", ")); \(window(from: terms.windowFrom, to: terms.windowTo)); \(duration)"
    }

    static func duration(subscriptionDays days: Int?) -> String {
        guard let days else { return "Once: a copy of the data you have now." }
        return "For \(days) day\(days == 1 ? "" : "s"): new data keeps being shared until you stop it or it ends."
    }

    /// "heart rate 60–100 beats/min on average"; a filter without bounds only asks for data of that type.
    static func filter(_ filter: GroupRequest.Filter) -> String {
        let name = typeName(filter.type).lowercased()
        let unit = filter.type.unit
        switch (filter.min, filter.max) {
        case (nil, nil): return "with \(name) data"
        case (let min?, nil): return "\(name) at least \(HealthChart.number(min)) \(unit) on average"
        case (nil, let max?): return "\(name) at most \(HealthChart.number(max)) \(unit) on average"
        case (let min?, let max?): return "\(name) \(HealthChart.number(min))–\(HealthChart.number(max)) \(unit) on average"
        }
    }

    static func refusalReason(_ reason: GroupRequest.RefusalReason?) -> String {
        switch reason {
        case .cohortBelowThreshold?: "Too few people match these criteria for an anonymous answer (the threshold is not disclosed per request)."
        case .cohortTooSimilar?: "The people matched differ from an earlier request's by too few: the answer could single someone out."
        case nil: ""
        }
    }

    /// An access-log entry's kind, in the log's "What" column.
    static func accessKind(_ kind: AccessLogEntry.Kind) -> String {
        switch kind {
        case .single: "Your data"
        case .group: "Anonymised aggregate"
        case .correction: "Correction (deleted)"
        }
    }

    /// The messages `?notice=` may name: a fixed set, so a link can never put its own text on a page.
    static let notices: [String: String] = [
        "signed-in": "You are signed in.",
        "second-factor-required": "Auditors must set up a second factor before anything else.",
        "second-factor-disabled": "Your second factor is off: signing in takes only your password.",
        "run-created": "The run is listed. Runners can join it now.",
        "run-changed": "The run is changed.",
        "run-cancelled": "The run is cancelled; its runners were told.",
        "run-joined": "You joined the run.",
        "run-left": "You left the run.",
        "run-checked-in": "You are checked in.",
        "run-zone": "Your privacy zone is saved: spectators never see you inside it.",
        "signed-out": "You are signed out.",
        "accepted": "You accepted the request: the company can now download the data it asked for.",
        "accepted-part": "You accepted part of the request: the company can download only what you granted.",
        "refused": "You refused the request. The company is not told: to it, the request reads pending until it expires.",
        "stopped": "Sharing stopped. The company receives nothing that arrives from now on.",
        "blocked": "Company blocked: its pending requests were refused and it cannot send you new ones.",
        "unblocked": "Company unblocked.",
        "notifications-saved": "Saved. You receive the mails ticked here, from now on.",
        "sharing-saved": "Saved. Companies receive none of the types you do not share, from now on.",
        "password-changed": "Password changed. Your other sessions were signed out.",
        "password-changed-keys-kept": "Password changed. Your other sessions were signed out; your API keys were kept.",
        "password-changed-keys-revoked":
            "Password changed. Your other sessions were signed out, and API keys revoked: {count}. Create new ones for your integrations.",
        "password-reset": "Your password is changed, and every session of your account was signed out. Sign in with the new password.",
        "time-zone-changed": "Time zone saved. Your days, charts and statistics now follow it.",
        "request-sent": "Request sent. You will see here when the person decides.",
        "cancelled": "Request cancelled.",
        "webhook-saved": "Webhook saved.",
        "webhook-removed": "Webhook removed.",
        "api-key-revoked": "API key revoked.",
        "subscription-ended": "Subscription ended.",
        "samples-deleted":
            "Deleted {count} samples. Your charts, statistics and export no longer include them; companies that already downloaded them keep their copy.",
    ]
}
