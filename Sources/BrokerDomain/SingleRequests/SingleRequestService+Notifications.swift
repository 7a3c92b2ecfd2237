import Foundation
import Logging
import PostgresNIO

/// The mails single requests cause. Each is written to the outbox in the transaction of its event (or of
/// the sweep that announces it) and checked against its recipient's opt-outs; none carries a value of
/// anyone's data, and none tells a company whether a person refused.
extension SingleRequestService {
    /// Announces new requests to their people, a batch at a time; the number claimed.
    @discardableResult
    package func announceNewRequests(limit: Int = 200, logger: Logger) async throws -> Int {
        guard let outbox else { return 0 }
        return try await client.withTransaction(logger: logger) { connection in
            let claimed = try await SingleRequestStore.claimUnnotifiedRequests(limit: limit, on: connection, logger: logger)
            for request in claimed {
                guard let userID = request.userID else { continue }
                let mail = NewRequestMail.Request(
                    companyName: request.thirdParty.companyName, types: request.asked.types, purpose: request.purpose,
                    purposeCode: request.purposeCode, subscriptionDays: request.asked.subscriptionDays, expiresAt: request.expiresAt)
                try await outbox.notify(accountID: userID, kind: .newRequest, on: connection, logger: logger) {
                    NewRequestMail.make(mail, to: $0, publicURL: outbox.publicURL, settingsURL: outbox.settingsURL)
                }
            }
            return claimed.count
        }
    }

    /// Tells people that a subscription they granted ends within three days, a batch at a time.
    @discardableResult
    package func announceEndingSubscriptions(limit: Int = 200, logger: Logger) async throws -> Int {
        guard let outbox else { return 0 }
        return try await client.withTransaction(logger: logger) { connection in
            let claimed = try await SingleRequestStore.claimEndingSubscriptions(
                withinDays: Self.endingNoticeDays, limit: limit, on: connection, logger: logger)
            for request in claimed {
                guard let userID = request.userID, let endsAt = request.subscription?.endsAt else { continue }
                try await outbox.notify(accountID: userID, kind: .subscriptionEnding, on: connection, logger: logger) {
                    SubscriptionEndingMail.make(
                        companyName: request.thirdParty.companyName, endsAt: endsAt, to: $0, publicURL: outbox.publicURL,
                        settingsURL: outbox.settingsURL)
                }
            }
            return claimed.count
        }
    }

    /// How long before a subscription's end its person is told.
    package static let endingNoticeDays = 3

    /// To the company, in the acceptance's transaction: what was granted.
    func mailGrant(_ request: SingleRequest, grant: ConsentGrant, on connection: PostgresConnection, logger: Logger) async throws {
        guard let outbox else { return }
        // The person is named by nothing but the request: a mail crosses relays and mailboxes, and the
        // company can look the request up by its id.
        try await outbox.notify(accountID: request.thirdParty.id, kind: .requestGranted, on: connection, logger: logger) {
            RequestGrantedMail.make(requestID: request.id, grant: grant, to: $0, publicURL: outbox.publicURL, settingsURL: outbox.settingsURL)
        }
    }

    /// To the company, in the sweep that announces the lapse: the request expired.
    func mailLapse(_ request: SingleRequest, on connection: PostgresConnection, logger: Logger) async throws {
        guard let outbox else { return }
        try await outbox.notify(accountID: request.thirdParty.id, kind: .requestExpired, on: connection, logger: logger) {
            RequestExpiredMail.make(requestID: request.id, to: $0, publicURL: outbox.publicURL, settingsURL: outbox.settingsURL)
        }
    }

    /// To the person, in the transaction that records a download: the first one under this grant.
    func mailFirstDownload(_ plan: DownloadPlan, on connection: PostgresConnection, logger: Logger) async throws {
        guard let outbox, let grant = plan.request.grant else { return }
        let key = "first-download:\(grant.id.uuidString.lowercased())"
        guard try await !outbox.exists(dedupeKey: key, on: connection, logger: logger) else { return }
        let now = clock.now
        try await outbox.notify(accountID: plan.userID, kind: .firstDownload, dedupeKey: key, on: connection, logger: logger) {
            FirstDownloadMail.make(
                companyName: plan.request.thirdParty.companyName, at: now, to: $0, publicURL: outbox.publicURL, settingsURL: outbox.settingsURL)
        }
    }
}
