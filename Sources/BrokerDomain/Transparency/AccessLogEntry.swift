import Foundation
import Logging
import PostgresNIO

/// One entry of a person's access log as they see it in `GET /v1/me/access-log`: a release of their data,
/// or a correction they made (samples they deleted).
package struct AccessLogEntry: Sendable, Equatable {
    package enum Kind: String, Sendable { case single, group, correction }

    package var id: UUID
    package var at: Date
    /// The company and its request; nil for a correction, which names none.
    package var thirdPartyID: UUID?
    package var companyName: String?
    package var requestID: UUID?
    package var kind: Kind
    package var types: [RequestedType]
    /// Samples (or positions) released, or deleted by a correction; nil for a group release (the data only
    /// contributed to an anonymised aggregate).
    package var samples: Int64?
    /// The grant a single request's release was made under (nil for releases made before grants existed).
    package var grantID: UUID?
    /// A correction's deleted range, inclusive; nil is open on that side.
    package var correctedFrom: Date?
    package var correctedTo: Date?

    package init(
        id: UUID, at: Date, thirdPartyID: UUID?, companyName: String?, requestID: UUID?, kind: Kind, types: [RequestedType], samples: Int64?,
        correctedFrom: Date? = nil, correctedTo: Date? = nil, grantID: UUID? = nil
    ) {
        self.id = id
        self.at = at
        self.thirdPartyID = thirdPartyID
        self.companyName = companyName
        self.requestID = requestID
        self.kind = kind
        self.types = types
        self.samples = samples
        self.correctedFrom = correctedFrom
        self.correctedTo = correctedTo
        self.grantID = grantID
    }

    /// The entry in plain words, for people reading their log.
    package var description: String {
        let count = samples ?? 0
        let plural = count == 1 ? "" : "s"
        switch kind {
        case .single:
            let what = types == [.position] ? "position" : "sample"
            let grant = grantID.map { " under your grant \($0.uuidString.lowercased().prefix(8))" } ?? ""
            return
                "\(companyName ?? "A company") received \(count) \(what)\(plural) of yours (\(types.map(\.rawValue).joined(separator: ", ")))\(grant)."
        case .group:
            return "Your data contributed to an anonymised aggregate released to \(companyName ?? "a company"); no sample of yours was shared."
        case .correction:
            let type = types.map { $0.rawValue.replacingOccurrences(of: "_", with: " ") }.joined(separator: ", ")
            let range: String =
                switch (correctedFrom, correctedTo) {
                case (let from?, let to?) where from == to: " taken at \(Timestamp.rfc3339(from))"
                case (let from?, let to?): " from \(Timestamp.rfc3339(from)) to \(Timestamp.rfc3339(to))"
                case (let from?, nil): " from \(Timestamp.rfc3339(from)) on"
                case (nil, let to?): " up to \(Timestamp.rfc3339(to))"
                case (nil, nil): " (all of them)"
                }
            return
                "You corrected your data: \(count) sample\(plural) of \(type)\(range) deleted. Copies companies downloaded before stay as they were."
        }
    }
}
