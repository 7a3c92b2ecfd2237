import Foundation
import Logging

/// Signs checkpoints of the audit log and hands them to auditors. A checkpoint is signed only for a chain
/// that verifies (recomputed in Swift) from the previous checkpoint this key signed, so the signer never
/// blesses a log that was rewritten behind its back.
package struct AuditCheckpoints: Sendable {
    let client: DatabasePool
    let trail: AuditTrail
    /// Nil when AUDIT_SIGNING_KEY_FILE is not set: nothing is signed, and the endpoints say so.
    package let key: AuditSigningKey?
    /// The time a checkpoint says it was signed at.
    let clock: WallClock

    /// `trail` is the log the checkpoints are signed over, as read by everyone else.
    package init(client: DatabasePool, trail: AuditTrail, key: AuditSigningKey?, clock: WallClock = .system) {
        self.clock = clock
        self.client = client
        self.trail = trail
        self.key = key
    }

    /// Signs and stores a checkpoint of the log as it is now; returns nil (signing nothing) when the log has
    /// not grown since this key's last checkpoint, unless `always`. Throws when the chain does not verify.
    @discardableResult
    package func publish(always: Bool = false, logger: Logger) async throws -> AuditCheckpoint? {
        guard let key else { throw AuditCheckpointError.notConfigured }
        let previous = try await lastSigned(by: key, logger: logger)
        let start = previous.flatMap { checkpoint in [UInt8](hexText: checkpoint.headHash).map { (checkpoint.logSize, $0) } }
        switch try await trail.verify(from: start, logger: logger) {
        case .broken(let seq):
            logger.critical("the audit log does not verify: no checkpoint signed", metadata: ["audit.broken_at": "\(seq)"])
            throw AuditCheckpointError.chainDoesNotVerify(seq)
        case .valid(let events, let lastHash):
            if !always, let previous, previous.logSize == events { return nil }
            let checkpoint = try AuditCheckpoint.sign(logSize: events, headHash: lastHash, at: clock.now, with: key)
            try await client.withTransaction(logger: logger) { try await AuditCheckpointStore.insert(checkpoint, on: $0, logger: logger) }
            return checkpoint
        }
    }

    /// The newest checkpoint stored under this key whose signature holds (a row that does not is skipped).
    private func lastSigned(by key: AuditSigningKey, logger: Logger) async throws -> AuditCheckpoint? {
        let recent = try await client.withConnection {
            try await AuditCheckpointStore.list(before: nil, limit: 10, keyID: key.keyID, on: $0, logger: logger)
        }
        for (_, checkpoint) in recent {
            if checkpoint.isSigned(by: key.publicKey) { return checkpoint }
            logger.error("a stored audit checkpoint does not carry this key's signature", metadata: ["audit.log_size": "\(checkpoint.logSize)"])
        }
        return nil
    }

    /// A page of checkpoints, newest first, for auditors. The cursor is the last one's row id: it says no
    /// more than how many checkpoints there are, which the list itself shows, so it is not sealed.
    package func list(page: PageRequest, for principal: Principal, logger: Logger) async throws -> Page<AuditCheckpoint> {
        try Self.refuseAllButAuditors(principal)
        let (limit, before) = try page.read { $0.sequence.flatMap { $0 > 0 ? $0 : nil } }
        let rows = try await client.withConnection {
            try await AuditCheckpointStore.list(before: before, limit: limit + 1, on: $0, logger: logger)
        }
        return Page(rows: rows, limit: limit) { PageCursor(sequence: $0.id) }.map(\.checkpoint)
    }

    package func latest(for principal: Principal, logger: Logger) async throws -> AuditCheckpoint? {
        try Self.refuseAllButAuditors(principal)
        let newest = try await client.withConnection { try await AuditCheckpointStore.list(before: nil, limit: 1, on: $0, logger: logger) }
        return newest.first?.checkpoint
    }

    /// The key checkpoints are signed with, for auditors to pin; nil when this server signs none.
    package func signingKey(for principal: Principal) throws -> AuditSigningKey? {
        try Self.refuseAllButAuditors(principal)
        return key
    }

    private static func refuseAllButAuditors(_ principal: Principal) throws(WrongRole) {
        guard principal.role == .auditor else { throw WrongRole("Only auditors read the audit log's checkpoints.") }
    }
}
