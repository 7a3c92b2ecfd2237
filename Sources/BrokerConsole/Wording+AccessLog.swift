import BrokerDomain
import Foundation

/// An access-log entry in plain words, in the page's language (the API's `description` is English).
extension Wording {
    static func accessDescription(_ entry: AccessLogEntry) -> String {
        let count = Int(entry.samples ?? 0)
        let company = entry.companyName ?? strings["accessLog.describe.someCompany"]
        let types = entry.types.map(typeWithUnit).joined(separator: ", ")
        switch entry.kind {
        case .single:
            let grant =
                entry.grantID.map { strings.format("accessLog.describe.grant", ["grant": String($0.uuidString.lowercased().prefix(8))]) } ?? ""
            let key = entry.types == [.position] ? "accessLog.describe.positions" : "accessLog.describe.samples"
            return strings.plural(key, count: count, ["company": company, "types": types, "grant": grant])
        case .group:
            return strings.format("accessLog.describe.group", ["company": company])
        case .correction:
            let range: String =
                switch (entry.correctedFrom, entry.correctedTo) {
                case (let from?, let to?) where from == to: strings.format("corrections.range.one", ["at": time(from)])
                case (let from?, let to?): strings.format("corrections.range.between", ["from": time(from), "to": time(to)])
                case (let from?, nil): strings.format("corrections.range.from", ["from": time(from)])
                case (nil, let to?): strings.format("corrections.range.to", ["to": time(to)])
                case (nil, nil): strings["corrections.range.all"]
                }
            return strings.plural("accessLog.describe.correction", count: count, ["types": types, "range": range])
        }
    }
}
