import Foundation
import Logging
import PostgresNIO

/// Signed consent receipts: issued on the transaction of every grant and every end of one (by
/// `SingleRequestService`), listed for the person and for both sides of a request, and checked for anyone.
/// Without a key (`CONSENT_SIGNING_KEY_FILE` unset) none are issued, and the server says so when it starts.
package struct ConsentReceipts: Sendable {
    package let client: DatabasePool
    /// Nil: receipts are off.
    package let key: ConsentSigningKey?
    /// Every receipt's `iss`: the server's public URL.
    package let issuer: String
    let pseudonyms: ConsentPseudonyms
    let clock: WallClock

    package init(client: DatabasePool, key: ConsentSigningKey?, issuer: String, clock: WallClock = .system) {
        self.client = client
        self.key = key
        self.issuer = issuer
        self.pseudonyms = ConsentPseudonyms(client: client)
        self.clock = clock
    }

    // MARK: Issuing

    /// Signs and stores the receipt of the request's grant (`granted`) or of its end, on the transaction
    /// that made the change. `party` is who ended it (`revoked`). Nil when receipts are off, or when there is
    /// no grant or no person to name.
    func issue(
        _ status: ConsentReceiptStatus, for request: SingleRequest, endedBy party: SingleRequest.Subscription.Party? = nil,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> ConsentReceipt? {
        guard let key, let grant = request.grant, let userID = request.userID else { return nil }
        let statusAt: Date
        var endedBy: String?
        switch status {
        case .granted:
            statusAt = grant.grantedAt
        case .revoked:
            statusAt = request.subscription?.endedAt ?? clock.now
            endedBy = (party ?? request.subscription?.endedBy ?? .user).rawValue
        case .expired:
            statusAt = request.subscription?.endsAt ?? clock.now
            endedBy = SingleRequest.Subscription.Party.thirdParty.rawValue
        }
        let id = UUID()
        let issuedAt = clock.now
        let claims = ConsentReceiptClaims(
            iss: issuer, iat: Int(issuedAt.timeIntervalSince1970.rounded(.down)), jti: id.uuidString.lowercased(),
            requestId: request.id.uuidString.lowercased(), grantId: grant.id.uuidString.lowercased(),
            company: .init(
                id: request.thirdParty.id.uuidString.lowercased(), name: request.thirdParty.companyName, vatNumber: request.thirdParty.vatNumber),
            subject: try await pseudonyms.pseudonym(of: userID, in: request.id, on: connection, logger: logger),
            status: status, statusAt: Timestamp.rfc3339(statusAt), endedBy: endedBy, types: grant.terms.types.map(\.rawValue),
            window: .init(from: grant.terms.windowFrom.map(Timestamp.rfc3339), to: grant.terms.windowTo.map(Timestamp.rfc3339)),
            subscriptionDays: grant.terms.subscriptionDays, purpose: request.purpose,
            purposeCode: request.purposeCode.code)
        let receipt = ConsentReceipt(
            id: id, requestID: request.id, grantID: grant.id, status: status, issuedAt: issuedAt,
            jws: try ConsentReceiptJWS.sign(claims, with: key), claims: claims)
        try await ConsentReceiptStore.insert(receipt, userID: userID, thirdPartyID: request.thirdParty.id, on: connection, logger: logger)
        return receipt
    }

    // MARK: Reads

    /// The person's receipts, newest first.
    package func list(for principal: Principal, page: PageRequest, logger: Logger) async throws -> Page<ConsentReceipt> {
        guard principal.role == .user else { throw WrongRole("Only people have consent receipts of their own; companies read a request's.") }
        let (limit, after) = try page.readByTimeAndID()
        let rows = try await client.withConnection { connection in
            try await ConsentReceiptStore.list(userID: principal.accountID, after: after, limit: limit, on: connection, logger: logger)
        }
        return Page(rows: rows, limit: limit) { PageKey(time: $0.issuedAt, id: $0.id) }
    }

    /// A request's receipts, oldest first, for its sender or its subject (anyone else: not found).
    package func receipts(ofRequest id: UUID, for principal: Principal, logger: Logger) async throws -> [ConsentReceipt] {
        try await record(ofRequest: id, for: principal, logger: logger).receipts
    }

    /// One receipt, for the person it names or the company that received it (anyone else: not found).
    package func receipt(id: UUID, for principal: Principal, logger: Logger) async throws -> ConsentReceipt {
        guard principal.role != .auditor else { throw WrongRole("Auditors see no single requests.") }
        let receipt = try await client.withConnection { connection in
            try await ConsentReceiptStore.receipt(id: id, visibleTo: principal.accountID, on: connection, logger: logger)
        }
        guard let receipt else { throw SingleRequestError.notFound }
        return receipt
    }

    /// What the request's FHIR `Consent` shows. The person is named by the company's pseudonym; the company
    /// is given it only once the person accepted (before, it would tell the company that a person is there).
    package func record(ofRequest id: UUID, for principal: Principal, logger: Logger) async throws -> ConsentRecord {
        guard principal.role != .auditor else { throw WrongRole("Auditors see no single requests.") }
        return try await client.withConnection { connection in
            guard let stored = try await SingleRequestStore.request(id: id, visibleTo: principal.accountID, on: connection, logger: logger)
            else { throw SingleRequestError.notFound }
            let request = SingleRequestService.asSeen(stored, by: principal)
            // A company sees no receipt of what it may not see: receipts exist only for grants, which it always sees.
            let receipts = request.grant == nil ? [] : try await ConsentReceiptStore.list(requestID: id, on: connection, logger: logger)
            var subject = receipts.first?.claims.subject
            if subject == nil, let userID = request.userID, principal.role == .user || request.grant != nil {
                subject = try await pseudonyms.pseudonym(of: userID, in: request.id, on: connection, logger: logger)
            }
            return ConsentRecord(request: request, subject: subject, receipts: receipts, issuer: issuer)
        }
    }

    // MARK: Checking

    /// The key set receipts verify against (RFC 7517): this server's key, or none when receipts are off.
    package var keySet: ConsentSigningKey.JWKSet { ConsentSigningKey.JWKSet(keys: key.map { [$0.jwk] } ?? []) }

    /// Checks a receipt as anyone may: signed by this server's key, unchanged, and issued by this server.
    package func verify(_ jws: String) -> Result<ConsentReceiptClaims, ConsentReceiptInvalid> {
        guard let key else { return .failure(.unknownKey("(this server signs no receipts: CONSENT_SIGNING_KEY_FILE is not set)")) }
        return Result { () throws(ConsentReceiptInvalid) in try ConsentReceiptJWS.verify(jws, trusting: [key.publicKey], issuer: issuer) }
    }

    /// A stored receipt's claims, read without checking its signature (the server wrote it).
    static func unverifiedClaims(of jws: String) -> ConsentReceiptClaims? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]) else { return nil }
        return try? JSONDecoder().decode(ConsentReceiptClaims.self, from: payload)
    }
}
