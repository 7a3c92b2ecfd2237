import Foundation

/// A third party's request for one person's data, as both sides see it.
package struct SingleRequest: Sendable, Equatable {
    /// `expired`: it was still pending when its time ran out (`expiresAt`).
    package enum Status: String, Sendable { case pending, accepted, refused, cancelled, expired }

    /// The sender; once the company erased its account, its former id with the name "Erased company".
    package struct ThirdParty: Sendable, Equatable {
        package var id: UUID
        package var companyName: String
        package var vatNumber: String
    }

    /// The person as the sender named them; both nil once the person erased their account.
    package struct Subject: Sendable, Equatable {
        package var email: String?
        package var fiscalCode: String?
    }

    package struct Subscription: Sendable, Equatable {
        package enum Status: String, Sendable { case pending, active, ended, expired }
        package enum Party: String, Sendable {
            case user
            case thirdParty = "third_party"
        }

        package var days: Int
        package var status: Status
        package var endsAt: Date?
        package var endedAt: Date?
        package var endedBy: Party?
    }

    package var id: UUID
    package var thirdParty: ThirdParty
    /// The person's account; nil once they erased it, and for a request that reached nobody (no active
    /// person had the subject's email or fiscal code, or the person had blocked the sender).
    package var userID: UUID?
    package var subject: Subject
    /// The terms in force: as asked while the request is pending, as granted once it is accepted
    /// (`grant`). Sample types and, for Track4Run, `position`. What a download releases.
    package var types: [RequestedType]
    package var purpose: String
    package var windowFrom: Date?
    package var windowTo: Date?
    /// What the sender asked for, unchanged by the person's grant.
    package var asked: ConsentTerms
    /// What the person granted; nil until they accept.
    package var grant: ConsentGrant?
    package var status: Status
    package var createdAt: Date
    package var decidedAt: Date?
    /// The subscription asked for (`days`) and what became of it: `ended` by the user at acceptance when
    /// they granted none, its `endsAt` from the days they granted otherwise. Nil when none was asked.
    package var subscription: Subscription?
    /// Set when the person refused and the sender may not learn it (`seenBySender`).
    package var unseenRefusal: UnseenRefusal?
    /// When a pending request expires unanswered: the sender's choice, or `PENDING_REQUEST_EXPIRY_DAYS`
    /// after creation. A refusal the sender may not see reads pending to it until then.
    package var expiresAt: Date
    /// The purpose's code; `purpose` is the sender's own words.
    package var purposeCode: PurposeOfUse

    /// What keeps a refusal from the sender: a request to nobody stays pending until it expires, so a refused
    /// one must look the same, or a refusal would tell the sender that the person exists.
    package struct UnseenRefusal: Sendable, Equatable {
        package var expiresAt: Date
        /// When the sender cancelled it (it was shown pending to them): cancelled from then on.
        package var withdrawnAt: Date?
        package var now: Date
    }

    /// The request as its sender is shown it. A refusal becomes pending until the request expires, then
    /// expired (as a request to nobody does), or cancelled once the sender withdrew it; the person and the
    /// audit log keep the refusal.
    package var seenBySender: SingleRequest {
        guard let unseenRefusal else { return self }
        var seen = self
        seen.unseenRefusal = nil
        if let withdrawnAt = unseenRefusal.withdrawnAt {
            (seen.status, seen.decidedAt) = (.cancelled, withdrawnAt)
        } else {
            (seen.status, seen.decidedAt) = (unseenRefusal.expiresAt <= unseenRefusal.now ? .expired : .pending, nil)
        }
        if var subscription = seen.subscription {
            subscription.status = Subscription.status(requestStatus: seen.status, endsAt: nil, endedAt: nil, now: unseenRefusal.now)
            seen.subscription = subscription
        }
        return seen
    }
}

extension SingleRequest.Subscription {
    /// The subscription's state at `now`. Expiry is computed from time alone, so it holds even when no
    /// background job ran at `endsAt`. A refused or cancelled request's subscription never started: `ended`.
    static func status(
        requestStatus: SingleRequest.Status, endsAt: Date?, endedAt: Date?, now: Date
    ) -> Status {
        switch requestStatus {
        case .pending: return .pending
        case .refused, .cancelled, .expired: return .ended
        case .accepted:
            if endedAt != nil { return .ended }
            if let endsAt, endsAt <= now { return .expired }
            return .active
        }
    }
}
