import Foundation
import Logging
import PostgresNIO

/// One release of a person's data as the person sees it in `GET /v1/me/access-log`.
package struct AccessLogEntry: Sendable, Equatable {
    package enum Kind: String, Sendable { case single, group }

    package var id: UUID
    package var at: Date
    package var thirdPartyID: UUID
    package var companyName: String
    package var requestID: UUID
    package var kind: Kind
    package var types: [RequestedType]
    /// Samples (or positions) released; nil for a group release (the data only contributed to an anonymised aggregate).
    package var samples: Int64?
    /// The grant a single request's release was made under (nil for releases made before grants existed).
    package var grantID: UUID?

    /// The entry in plain words, for people reading their log.
    package var description: String {
        switch kind {
        case .single:
            let count = samples ?? 0
            let what = types == [.position] ? "position" : "sample"
            let grant = grantID.map { " under your grant \($0.uuidString.lowercased().prefix(8))" } ?? ""
            return
                "\(companyName) received \(count) \(what)\(count == 1 ? "" : "s") of yours (\(types.map(\.rawValue).joined(separator: ", ")))\(grant)."
        case .group:
            return "Your data contributed to an anonymised aggregate released to \(companyName); no sample of yours was shared."
        }
    }
}
