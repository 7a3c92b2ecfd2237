import Foundation
import Logging
import PostgresNIO

/// Accepting a request: the person grants all it asks, or less (`GrantNarrowing`), never more.
extension SingleRequestService {
    /// Accepts the request with what the person grants of it. The grant is checked against the request
    /// (locked meanwhile) and the person's sharing preferences; a grant wider than the request, or naming
    /// a type the person does not share, is refused naming the field, and nothing changes.
    package func accept(id: UUID, granting narrowing: GrantNarrowing = .everything, by principal: Principal, logger: Logger)
        async throws -> SingleRequest
    {
        guard principal.role == .user else { throw WrongRole("Only the person asked accepts or refuses a request.") }
        return try await client.withTransaction(logger: logger) { connection in
            // The person's account row first, as a change of sharing preferences and a block take it: a
            // preference saved meanwhile is either seen here or waits for this grant.
            try await SharingPreferenceStore.lock(userID: principal.accountID, on: connection, logger: logger)
            guard
                let pending = try await SingleRequestStore.pendingForDecision(
                    requestID: id, userID: principal.accountID, on: connection, logger: logger)
            else { throw try await whyUnchanged(id: id, principal: principal, on: connection, logger: logger) }
            let unshared = try await unsharedTypes(of: principal.accountID, on: connection, logger: logger)
            let isRun = try await SingleRequestStore.isRunRequest(id, on: connection, logger: logger)
            let terms = try Self.grantedTerms(narrowing, asked: pending.asked, unshared: unshared, isRun: isRun)
            guard
                let request = try await SingleRequestStore.accept(
                    requestID: id, by: principal.accountID, granting: terms, on: connection, logger: logger),
                let grant = request.grant
            else { throw try await whyUnchanged(id: id, principal: principal, on: connection, logger: logger) }
            try await audit(
                AuditAction.singleRequestAccepted, request, actor: .user, details: Self.auditDetails(of: grant), on: connection, logger: logger)
            let receipt = try await receipts.issue(.granted, for: request, on: connection, logger: logger)
            try await WebhookOutboxStore.enqueue(
                .singleRequestAccepted, to: request.thirdParty.id, requestID: id,
                payload: GrantAnnouncement(request, grant: grant, receipt: receipt?.jws), on: connection, logger: logger)
            try await mailGrant(request, grant: grant, on: connection, logger: logger)
            return request
        }
    }

    /// The person's unshared sample types, which no grant may name.
    func unsharedTypes(of userID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Set<SampleType> {
        try await SharingPreferenceStore.unsharedTypes(of: userID, on: connection, logger: logger)
    }

    /// The types the person never shares, for their accept form (shown unchecked and disabled).
    package func unsharedTypes(of principal: Principal, logger: Logger) async throws -> Set<SampleType> {
        guard principal.role == .user else { return [] }
        return try await client.withConnection { connection in
            try await unsharedTypes(of: principal.accountID, on: connection, logger: logger)
        }
    }

    /// What the audit event of an acceptance records of the grant: what was granted, never a value.
    static func auditDetails(of grant: ConsentGrant) -> [String: AuditValue] {
        var details: [String: AuditValue] = [
            "grantId": .string(grant.id.uuidString.lowercased()),
            "types": .string(grant.terms.types.map(\.rawValue).joined(separator: ",")),
            "subscriptionDays": .int(grant.terms.subscriptionDays ?? 0),
            "narrowed": .bool(grant.narrowed),
        ]
        if let from = grant.terms.windowFrom { details["windowFrom"] = .string(Timestamp.rfc3339(from)) }
        if let to = grant.terms.windowTo { details["windowTo"] = .string(Timestamp.rfc3339(to)) }
        return details
    }

    /// The terms the person grants: what was asked, narrowed by what they sent, without the types they
    /// do not share. Every field that asks for more than the request did is an error naming it.
    static func grantedTerms(_ narrowing: GrantNarrowing, asked: ConsentTerms, unshared: Set<SampleType>, isRun: Bool) throws
        -> ConsentTerms
    {
        var errors: [FieldError] = []
        var types: [RequestedType] = []
        if let names = narrowing.types {
            if names.isEmpty { errors.append(FieldError(field: "types", message: "grant at least one type (or refuse the request)")) }
            for (index, name) in names.enumerated() {
                guard let type = RequestedType(rawValue: name) else {
                    errors.append(FieldError(field: "types[\(index)]", message: "is not a sample type nor position"))
                    continue
                }
                if types.contains(type) {
                    errors.append(FieldError(field: "types[\(index)]", message: "is repeated"))
                } else if !asked.types.contains(type) {
                    errors.append(FieldError(field: "types[\(index)]", message: "was not asked for: a grant never adds to a request"))
                } else if let sample = type.sampleType, unshared.contains(sample) {
                    errors.append(
                        FieldError(field: "types[\(index)]", message: "is a type you do not share with anyone (see your sharing preferences)"))
                }
                types.append(type)
            }
        } else {
            types = asked.types.filter { $0.sampleType.map { !unshared.contains($0) } ?? true }
            if types.isEmpty {
                errors.append(
                    FieldError(field: "types", message: "you share none of the types this request asks for: share one first, or refuse it"))
            }
        }
        // Keep the request's order, so a grant of everything equals what was asked.
        types = asked.types.filter(types.contains)
        let from = time(narrowing.windowFrom, field: "window.from", into: &errors) ?? asked.windowFrom
        let to = time(narrowing.windowTo, field: "window.to", into: &errors) ?? asked.windowTo
        if let from, let askedFrom = asked.windowFrom, from < askedFrom {
            errors.append(
                FieldError(field: "window.from", message: "must not be before the requested window's start (\(Timestamp.rfc3339(askedFrom)))"))
        }
        if let to, let askedTo = asked.windowTo, to > askedTo {
            errors.append(FieldError(field: "window.to", message: "must not be after the requested window's end (\(Timestamp.rfc3339(askedTo)))"))
        }
        if let from, let to, from > to { errors.append(FieldError(field: "window.from", message: "must not be after window.to")) }
        var days = asked.subscriptionDays
        if let granted = narrowing.subscriptionDays {
            switch asked.subscriptionDays {
            case nil where granted != 0:
                errors.append(FieldError(field: "subscription.days", message: "the request asked for no subscription: grant 0 or leave it out"))
            case let askedDays? where !(0...askedDays).contains(granted):
                errors.append(FieldError(field: "subscription.days", message: "must be 0–\(askedDays) (0: no subscription)"))
            default:
                days = granted == 0 ? nil : granted
            }
        }
        if isRun {
            if !types.contains(.position) {
                errors.append(FieldError(field: "types", message: "a run's request needs your position: the run shows nothing else"))
            }
            if from != asked.windowFrom || to != asked.windowTo {
                errors.append(FieldError(field: "window", message: "a run's request covers the run's time and cannot be narrowed"))
            }
            if days != asked.subscriptionDays {
                errors.append(FieldError(field: "subscription.days", message: "a run's request ends with the run and cannot be shortened"))
            }
        }
        guard errors.isEmpty else { throw SingleRequestError.invalid(errors) }
        return ConsentTerms(types: types, windowFrom: from, windowTo: to, subscriptionDays: days)
    }

}
