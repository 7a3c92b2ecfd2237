import Foundation
import Logging
import PostgresNIO

/// Reading and verifying the audit log (auditors and `d4h audit verify`).
package struct AuditTrail: Sendable {
    package let client: DatabasePool

    package init(client: DatabasePool) { self.client = client }

    /// One stored event as auditors see it; `details` is the stored JSON text.
    package struct Entry: Sendable, Equatable {
        package var seq: Int64
        package var at: Date
        package var actorID: String?
        package var actorRole: String
        package var action: String
        package var requestID: UUID?
        package var subject: String?
        package var details: String
        package var prevHash: String
        package var hash: String
    }

    package struct Query: Sendable {
        package var from: Date?
        package var to: Date?
        package var action: String?
        package init(from: Date?, to: Date?, action: String?) { (self.from, self.to, self.action) = (from, to, action) }
    }

    /// A page of events, oldest first, for auditors. The cursor is the last event's sequence number, which
    /// every item shows anyway: nothing to seal.
    package func events(_ query: Query, page: PageRequest, for principal: Principal, logger: Logger) async throws -> Page<Entry> {
        guard principal.role == .auditor else { throw WrongRole("Only auditors read the audit log.") }
        let (limit, after) = try page.read { $0.sequence.flatMap { $0 >= 0 ? $0 : nil } }
        let entries = try await client.withConnection {
            try await AuditEventStore.entries(query, afterSeq: after, limit: limit + 1, on: $0, logger: logger)
        }
        return Page(rows: entries, limit: limit) { PageCursor(sequence: $0.seq) }
    }

    package enum Verification: Sendable, Equatable {
        case valid(events: Int64, lastHash: String)
        case broken(at: Int64)
    }

    /// What the log says against an earlier signed checkpoint (whose signature the caller has checked).
    package enum CheckpointVerification: Sendable, Equatable {
        /// The chain verifies and still holds the checkpoint's events unchanged.
        case consistent(events: Int64, lastHash: String)
        /// The log is shorter than it was when the checkpoint was signed.
        case truncated(checkpointSize: Int64, events: Int64)
        /// The chain verifies, but its first `checkpointSize` events no longer hash to the signed head.
        case rewritten(checkpointSize: Int64)
        /// The chain itself does not verify at this sequence number.
        case broken(at: Int64)
    }

    /// Recomputes every hash, in Swift, from the stored fields: each event's hash must be SHA-256(previous
    /// hash ‖ canonical event), its `prev_hash` the previous event's hash, its `seq` one more than the
    /// previous, and the chain head the last event. The first sequence number where any of this fails is
    /// reported. No SQL function of the database takes part, so one that lies changes nothing.
    package func verify(for principal: Principal, logger: Logger) async throws -> Verification {
        guard principal.role == .auditor else { throw WrongRole("Only auditors verify the audit log.") }
        return try await verify(logger: logger)
    }

    /// The same for whoever holds the database (`d4h audit verify`): no caller, so no role.
    package func verify(logger: Logger) async throws -> Verification {
        try await walk(noting: nil, logger: logger).verification
    }

    /// The same from an earlier verified point (a checkpoint's size and head hash) onwards: event `start.0`
    /// must still have that hash, and every event after it must link on. What the checkpoint publisher uses,
    /// so each step rehashes only what was appended since.
    package func verify(from start: (Int64, [UInt8])?, logger: Logger) async throws -> Verification {
        try await walk(from: start, noting: nil, logger: logger).verification
    }

    /// The same, and then: the log still has at least `checkpoint.logSize` events, and the first that many
    /// hash to the checkpoint's head. Catches a truncation (events deleted and the head moved back) and a
    /// rewrite (an event changed and the whole chain recomputed after it), however consistent the result.
    package func verify(against checkpoint: AuditCheckpoint, logger: Logger) async throws -> CheckpointVerification {
        let (verification, noted) = try await walk(noting: checkpoint.logSize, logger: logger)
        switch verification {
        case .broken(let seq):
            return .broken(at: seq)
        case .valid(let events, let lastHash):
            if events < checkpoint.logSize { return .truncated(checkpointSize: checkpoint.logSize, events: events) }
            guard noted?.hexText == checkpoint.headHash else { return .rewritten(checkpointSize: checkpoint.logSize) }
            return .consistent(events: events, lastHash: lastHash)
        }
    }

    /// The events per statement while walking the chain.
    static let walkPage = 5000

    /// Reads the whole log in one repeatable-read snapshot (so events appended meanwhile by the running
    /// server are simply not seen: a consistent prefix), a page at a time, and walks it in Swift. `noting`
    /// asks for the chain's hash after that many events.
    private func walk(from start: (Int64, [UInt8])? = nil, noting size: Int64?, logger: Logger) async throws
        -> (verification: Verification, noted: [UInt8]?)
    {
        try await client.withTransaction(logger: logger) { connection in
            try await AuditEventStore.readOneSnapshot(on: connection, logger: logger)
            try await LongStatements.allow(on: connection, logger: logger)
            var walker = AuditChain.Walker()
            if let (events, hash) = start, events > 0 {
                guard try await AuditEventStore.hash(ofEvent: events, on: connection, logger: logger) == hash else {
                    return (.broken(at: events), nil)
                }
                walker = AuditChain.Walker(events: events, lastHash: hash)
            }
            var noted: [UInt8]? = size == 0 ? AuditChain.genesis : nil
            let head = try await AuditEventStore.chainHead(on: connection, logger: logger)
            while true {
                let links = try await AuditEventStore.links(after: walker.events, limit: Self.walkPage, on: connection, logger: logger)
                for link in links {
                    // A gap, a wrong link or a wrong hash: the first event that does not verify.
                    guard walker.accept(link) else { return (.broken(at: link.seq), nil) }
                    if walker.events == size { noted = walker.lastHash }
                }
                if links.count < Self.walkPage { break }
            }
            // The head must be the last event (or the genesis on an empty log).
            if let head, head.seq != walker.events || head.hash != walker.lastHash {
                return (.broken(at: walker.events + 1), nil)
            }
            return (.valid(events: walker.events, lastHash: walker.lastHash.hexText), noted)
        }
    }
}
