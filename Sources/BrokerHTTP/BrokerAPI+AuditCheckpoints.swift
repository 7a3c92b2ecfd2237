import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

/// Signed checkpoints of the audit log, for auditors to download and keep (see `AuditCheckpoint`).
extension BrokerAPI {
    func auditListCheckpoints(_ input: Operations.AuditListCheckpoints.Input) async throws -> Operations.AuditListCheckpoints.Output {
        let page = try await services.auditCheckpoints.list(
            page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), for: try await caller(), logger: logger)
        return .ok(.init(body: .json(.init(items: page.items.map(Components.Schemas.AuditCheckpoint.init), nextCursor: page.next?.text))))
    }

    func auditGetLatestCheckpoint(_ input: Operations.AuditGetLatestCheckpoint.Input) async throws
        -> Operations.AuditGetLatestCheckpoint.Output
    {
        guard let checkpoint = try await services.auditCheckpoints.latest(for: try await caller(), logger: logger) else {
            throw Problem.status(.notFound, detail: "No audit checkpoint has been signed yet.")
        }
        return .ok(.init(body: .json(.init(checkpoint))))
    }

    func auditGetSigningKey(_ input: Operations.AuditGetSigningKey.Input) async throws -> Operations.AuditGetSigningKey.Output {
        guard let key = try services.auditCheckpoints.signingKey(for: try await caller()) else {
            throw Problem.status(.notFound, detail: "This server signs no audit checkpoints (AUDIT_SIGNING_KEY_FILE is not set).")
        }
        return .ok(.init(body: .json(.init(algorithm: .ed25519, keyId: key.keyID, publicKey: key.publicKeyText))))
    }
}

extension Components.Schemas.AuditCheckpoint {
    init(_ checkpoint: AuditCheckpoint) {
        self.init(
            format: checkpoint.format, logSize: checkpoint.logSize, headHash: checkpoint.headHash, signedAt: checkpoint.signedAt,
            keyId: checkpoint.keyId, signature: checkpoint.signature)
    }
}
