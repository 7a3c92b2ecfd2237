import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

/// Signed consent receipts: the person's list, a request's list for both sides, the request as a FHIR
/// `Consent`, and, for anyone, the key set and the check.
extension BrokerAPI {
    func listMyConsentReceipts(_ input: Operations.ListMyConsentReceipts.Input) async throws -> Operations.ListMyConsentReceipts.Output {
        let page = try await services.consentReceipts.list(
            for: try await caller(), page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), logger: logger)
        return .ok(.init(body: .json(.init(items: try page.items.map(Components.Schemas.ConsentReceipt.init), nextCursor: page.next?.text))))
    }

    func listSingleRequestReceipts(_ input: Operations.ListSingleRequestReceipts.Input) async throws
        -> Operations.ListSingleRequestReceipts.Output
    {
        let principal = try await caller()
        let receipts = try await services.consentReceipts.receipts(ofRequest: try requestID(input.path.id), for: principal, logger: logger)
        return .ok(.init(body: .json(.init(items: try receipts.map(Components.Schemas.ConsentReceipt.init)))))
    }

    func getSingleRequestConsent(_ input: Operations.GetSingleRequestConsent.Input) async throws -> Operations.GetSingleRequestConsent.Output {
        let principal = try await caller()
        let record = try await services.consentReceipts.record(ofRequest: try requestID(input.path.id), for: principal, logger: logger)
        return .ok(.init(body: .applicationFhirJson(try FHIRConsent(record).resource)))
    }

    func getConsentReceiptKeys(_ input: Operations.GetConsentReceiptKeys.Input) async throws -> Operations.GetConsentReceiptKeys.Output {
        .ok(.init(body: .json(.init(keys: services.consentReceipts.keySet.keys.map(Components.Schemas.Jwk.init)))))
    }

    func verifyConsentReceipt(_ input: Operations.VerifyConsentReceipt.Input) async throws -> Operations.VerifyConsentReceipt.Output {
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        switch services.consentReceipts.verify(body.receipt) {
        case .success(let claims):
            return .ok(.init(body: .json(.init(valid: true, claims: try .init(claims)))))
        case .failure(let problem):
            return .ok(.init(body: .json(.init(valid: false, problem: problem.description))))
        }
    }
}

extension Components.Schemas.ConsentReceipt {
    init(_ receipt: ConsentReceipt) throws {
        self.init(
            id: receipt.id.uuidString.lowercased(), requestId: receipt.requestID.uuidString.lowercased(),
            grantId: receipt.grantID.uuidString.lowercased(), status: .init(receipt.status), issuedAt: receipt.issuedAt,
            receipt: receipt.jws, claims: try .init(receipt.claims))
    }
}

extension Components.Schemas.ConsentReceiptStatus {
    init(_ status: ConsentReceiptStatus) {
        switch status {
        case .granted: self = .granted
        case .revoked: self = .revoked
        case .expired: self = .expired
        }
    }
}

extension Components.Schemas.ConsentReceiptClaims {
    /// The claims as the contract types them; only claims that passed `checkWellFormed` (or that the
    /// server signed) are converted, so a time or type that does not read is a bug.
    init(_ claims: ConsentReceiptClaims) throws {
        func time(_ text: String) throws -> Date {
            guard let date = Timestamp.parse(text) else { throw StoredValueMismatch(column: "consent_receipts.jws (a time)", value: text) }
            return date
        }
        self.init(
            iss: claims.iss, iat: claims.iat, jti: claims.jti, requestId: claims.requestId, grantId: claims.grantId,
            company: .init(id: claims.company.id, name: claims.company.name, vatNumber: claims.company.vatNumber),
            subject: claims.subject, status: .init(claims.status), statusAt: try time(claims.statusAt),
            endedBy: claims.endedBy.flatMap(EndedByPayload.init(rawValue:)),
            types: try claims.types.map { name in
                guard let type = RequestedType(rawValue: name) else {
                    throw StoredValueMismatch(column: "consent_receipts.jws (a type)", value: name)
                }
                return Components.Schemas.RequestedType(type)
            },
            window: .init(from: try claims.window.from.map(time), to: try claims.window.to.map(time)),
            subscriptionDays: claims.subscriptionDays, purpose: claims.purpose,
            purposeCode: .init(try signedPurposeCode(claims.purposeCode)))
    }
}

/// A signed receipt's purpose code; verification checked it is one of ours, so another is our bug (a 500).
private func signedPurposeCode(_ text: String) throws -> PurposeOfUse {
    guard let code = PurposeOfUse(rawValue: text) else {
        throw StoredValueMismatch(column: "consent_receipts.jws (purposeCode)", value: text)
    }
    return code
}

extension Components.Schemas.Jwk {
    init(_ key: ConsentSigningKey.JWK) {
        self.init(kty: .okp, crv: .ed25519, x: key.x, kid: key.kid, use: .sig, alg: .edDSA)
    }
}
