import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

/// Signed checkpoints of the audit log, for auditors to download and keep (see `AuditCheckpoint`).
extension BrokerAPI {
    func auditListCheckpoints(_ input: Operations.AuditListCheckpoints.Input) async throws -> Operations.AuditListCheckpoints.Output {
        _ = try await caller(.auditor)
        var errors: [FieldError] = []
        let page = PageRequest.read(
            limit: input.query.limit, cursor: input.query.cursor, parse: { Int64($0).flatMap { $0 > 0 ? $0 : nil } }, into: &errors)
        guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        let rows = try await auditCheckpoints.list(before: page.cursor, limit: page.limit + 1, logger: logger)
        let shown = rows.prefix(page.limit)
        return .ok(
            .init(
                body: .json(
                    .init(
                        items: shown.map { Components.Schemas.AuditCheckpoint($0.checkpoint) },
                        nextCursor: rows.count > page.limit ? shown.last.map { String($0.id) } : nil))))
    }

    func auditGetLatestCheckpoint(_ input: Operations.AuditGetLatestCheckpoint.Input) async throws
        -> Operations.AuditGetLatestCheckpoint.Output
    {
        _ = try await caller(.auditor)
        guard let checkpoint = try await auditCheckpoints.latest(logger: logger) else {
            throw Problem.status(.notFound, detail: "No audit checkpoint has been signed yet.")
        }
        return .ok(.init(body: .json(.init(checkpoint))))
    }

    func auditGetSigningKey(_ input: Operations.AuditGetSigningKey.Input) async throws -> Operations.AuditGetSigningKey.Output {
        _ = try await caller(.auditor)
        guard let key = auditCheckpoints.key else {
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
