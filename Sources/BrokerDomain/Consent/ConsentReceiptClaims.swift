import Foundation

/// What a consent receipt says: who granted what to whom, for what, and what became of it. The JWS payload
/// (`ConsentReceiptJWS`), one JSON object with these members; an optional member is absent when it has
/// no value (an open window's end, `endedBy` on a grant). Times are RFC 3339 in UTC, as everywhere in the
/// API, except `iat`, which JWT readers expect in seconds since 1970 (RFC 7519 §2).
package struct ConsentReceiptClaims: Codable, Sendable, Equatable {
    package struct Company: Codable, Sendable, Equatable {
        package var id: String
        package var name: String
        package var vatNumber: String
    }

    package struct Window: Codable, Sendable, Equatable {
        package var from: String?
        package var to: String?
    }

    /// The server that issued it: its public URL (`PUBLIC_URL`).
    package var iss: String
    /// When it was signed, in seconds since 1970.
    package var iat: Int
    /// The receipt's own id.
    package var jti: String
    package var requestId: String
    /// The grant it is about (`ConsentGrant.id`); its end's receipt names the same grant.
    package var grantId: String
    /// The company that asked, as it was named when the receipt was signed.
    package var company: Company
    /// The person, by the pseudonym made for this request (`ConsentPseudonyms`): the same in every receipt
    /// of the request, and in no other request's.
    package var subject: String
    package var status: ConsentReceiptStatus
    /// When the status took effect: the acceptance, the stop, the subscription's last moment.
    package var statusAt: String
    /// `user` or `third_party`, for `revoked` and `expired` (as the `subscription.ended` webhook says).
    package var endedBy: String?
    /// The granted types (sample types and `position`).
    package var types: [String]
    /// The granted window of sample times; an absent end is open.
    package var window: Window
    /// The granted subscription's days; absent for a one-off release of what had arrived at acceptance.
    package var subscriptionDays: Int?
    /// Why the company asked, in its own words.
    package var purpose: String
    /// Why the company asked, as an HL7 v3 PurposeOfUse code (docs/purposes.md).
    package var purposeCode: String

    /// The checks a receipt's claims pass beyond being JSON of this shape: ids are UUIDs, times RFC 3339,
    /// types known, and the rest inside the ranges the server issues.
    package func checkWellFormed() throws(ConsentReceiptInvalid) {
        func bad(_ why: String) -> ConsentReceiptInvalid { .badClaims(why) }
        guard !iss.isEmpty else { throw bad("iss is empty") }
        guard iat > 0 else { throw bad("iat is not a time") }
        for (name, value) in [("jti", jti), ("requestId", requestId), ("grantId", grantId), ("company.id", company.id)] {
            guard UUID(uuidString: value) != nil, value == value.lowercased() else { throw bad("\(name) is not a lowercase UUID") }
        }
        guard !company.name.isEmpty else { throw bad("company.name is empty") }
        guard subject.hasPrefix(ConsentPseudonyms.prefix), subject.count == ConsentPseudonyms.prefix.count + 32 else {
            throw bad("subject is not a Data4Help pseudonym")
        }
        guard Timestamp.parse(statusAt) != nil else { throw bad("statusAt is not an RFC 3339 time") }
        switch (status, endedBy) {
        case (.granted, nil), (.revoked, "user"?), (.revoked, "third_party"?), (.expired, "third_party"?): break
        default: throw bad("endedBy \(endedBy ?? "(absent)") does not go with status \(status.rawValue)")
        }
        guard !types.isEmpty, Set(types).count == types.count, types.allSatisfy({ RequestedType(rawValue: $0) != nil }) else {
            throw bad("types must be distinct sample types or position, at least one")
        }
        let from = window.from.map { Timestamp.parse($0) }
        let to = window.to.map { Timestamp.parse($0) }
        if from == .some(nil) || to == .some(nil) { throw bad("window.from and window.to must be RFC 3339 times") }
        if let from = from ?? nil, let to = to ?? nil, from > to { throw bad("window.from is after window.to") }
        if let days = subscriptionDays, !SingleRequestService.subscriptionDays.contains(days) { throw bad("subscriptionDays is out of range") }
        guard SingleRequestService.purposeLength.contains(purpose.count) else { throw bad("purpose is empty or too long") }
        guard PurposeOfUse(rawValue: purposeCode) != nil else { throw bad("purposeCode is not one of docs/purposes.md's codes") }
    }
}
