import Foundation
import Logging
import PostgresNIO

/// The single requests Track4Run sends on an organiser's behalf (R38–R41), on the caller's transaction.
extension SingleRequestService {
    /// What a run asks its runners for: their position (spectators, finish) and their heart rate (the
    /// organiser's safety desk). Accepting is all or nothing, so no runner accepts without sharing
    /// `position` (R47).
    static let runTypes: [RequestedType] = [.position, .sample(.heartRate)]
    /// The runner asked for it: the request follows from their joining the run.
    static let runPurpose = PurposeOfUse.patientRequested

    /// Sends the runner the run's request: their data over the run's time (`from`–`to`), pending until the
    /// run ends. It names no one to the organiser (no subject): the organiser knows a runner by bib, never by
    /// email or fiscal code. Two days of subscription cover any run (it is sent at most a day before a start,
    /// and runs last at most a day); the run's day ends it with the run (`endRequestsWithTheirRuns`).
    func sendForRun(
        organiserID: UUID, userID: UUID, runName: String, from: Date, to: Date, on connection: PostgresConnection, logger: Logger
    ) async throws -> SingleRequest {
        do {
            let request = try await SingleRequestStore.insert(
                thirdPartyID: organiserID, userID: userID, subject: .init(email: nil, fiscalCode: nil), types: Self.runTypes,
                purpose:
                    "Track4Run: \(runName). Your live position, shown to spectators by your bib or display name (never in your privacy zone), and your finish time; the organiser receives your whole track in the run's window, inside your privacy zone too; sharing ends with the run.",
                windowFrom: Timestamp.postgresText(from), windowTo: Timestamp.postgresText(to), subscriptionDays: 2, expiryDays: 2,
                expiresAt: nil, purposeCode: Self.runPurpose, on: connection, logger: logger)
            try await audit(
                AuditAction.singleRequestCreated, request, actor: .thirdParty,
                details: [
                    "types": .string(Self.runTypes.map(\.rawValue).joined(separator: ",")), "subscriptionDays": .int(2), "run": .bool(true),
                    "purposeCode": .string(Self.runPurpose.code),
                ],
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
