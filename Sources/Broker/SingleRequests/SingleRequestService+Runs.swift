import Foundation
import Logging
import PostgresNIO

/// The single requests Track4Run sends on an organiser's behalf (R38–R41), on the caller's transaction.
extension SingleRequestService {
    /// What a run asks its runners for: their position (spectators, finish) and their heart rate (the
    /// organiser's safety desk). Accepting is all or nothing, so no runner accepts without sharing
    /// `position` (R47).
    static let runTypes: [RequestedType] = [.position, .sample(.heartRate)]

    /// Sends the runner the run's request: a subscription over the run's time, pending until the run ends.
    /// Throws `duplicatePending` when the organiser already has a request pending to them (the run's day
    /// job tries again later).
    func sendForRun(
        organiserID: UUID, userID: UUID, email: String, runName: String, from: Date, to: Date, on connection: PostgresConnection, logger: Logger
    ) async throws -> SingleRequest {
        do {
            let request = try await SingleRequestStore.insert(
                thirdPartyID: organiserID, userID: userID, subject: .init(email: email, fiscalCode: nil), types: Self.runTypes,
                purpose:
                    "Track4Run: \(runName). Your live position, shown to spectators by your bib or display name, and your finish time; sharing ends with the run.",
                windowFrom: Timestamp.postgresText(from), windowTo: Timestamp.postgresText(to), subscriptionDays: 1, expiryDays: 1,
                on: connection, logger: logger)
            try await audit(
                AuditAction.singleRequestCreated, request, actor: .thirdParty,
                details: ["types": .string(Self.runTypes.map(\.rawValue).joined(separator: ",")), "subscriptionDays": .int(1), "run": .bool(true)],
                on: connection, logger: logger)
            return request
        } catch let error where PostgresErrors.uniqueViolation(in: error) == "single_requests_one_pending_subject" {
            throw SingleRequestError.duplicatePending
        }
    }

    /// Withdraws a run's request on the organiser's behalf: cancelled while pending, its subscription
    /// ended once accepted; nothing when it is already over. `reason` goes to the audit log.
    func withdrawForRun(requestID: UUID, organiserID: UUID, reason: String, on connection: PostgresConnection, logger: Logger) async throws {
        if let cancelled = try await SingleRequestStore.decide(.cancel, requestID: requestID, by: organiserID, on: connection, logger: logger) {
            try await audit(
                AuditAction.singleRequestCancelled, cancelled, actor: .thirdParty, details: ["reason": .string(reason)], on: connection,
                logger: logger)
        } else if let ended = try await SingleRequestStore.endSubscription(
            requestID: requestID, by: organiserID, as: .thirdParty, on: connection, logger: logger)
        {
            try await announceEnd(ended, by: .thirdParty, reason: "revoked", auditReason: reason, on: connection, logger: logger)
        }
    }
}
