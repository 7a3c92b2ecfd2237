import Foundation
import Logging
import PostgresNIO

/// Reading and verifying the audit log (auditors and `d4h audit verify`).
public struct AuditTrail: Sendable {
    public let client: DatabasePool

    public init(client: DatabasePool) { self.client = client }

    /// One stored event as auditors see it; `details` is the stored JSON text.
    public struct Entry: Sendable, Equatable {
        public var seq: Int64
        public var at: Date
        public var actorID: String?
        public var actorRole: String
        public var action: String
        public var requestID: UUID?
        public var subject: String?
        public var details: String
        public var prevHash: String
        public var hash: String
    }

    public struct Query: Sendable {
        public var from: Date?
        public var to: Date?
        public var action: String?
        public init(from: Date?, to: Date?, action: String?) { (self.from, self.to, self.action) = (from, to, action) }
    }

    /// Up to `limit` events after `afterSeq`, oldest first.
    public func events(_ query: Query, afterSeq: Int64?, limit: Int, logger: Logger) async throws -> [Entry] {
        let from = query.from.map(Timestamp.postgresText), to = query.to.map(Timestamp.postgresText)
        let rows = try await client.query(
            """
            SELECT seq, at, actor_id, actor_role, action, request_id, subject, details::text, encode(prev_hash, 'hex'), encode(hash, 'hex')
            FROM audit_events
            WHERE seq > \(afterSeq ?? 0)
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
              AND (\(query.action)::text IS NULL OR action = \(query.action))
            ORDER BY seq
            LIMIT \(limit)
            """, logger: logger)
        var entries: [Entry] = []
        for try await (seq, at, actorID, role, action, requestID, subject, details, prevHash, hash)
            in rows.decode((Int64, Date, String?, String, String, UUID?, String?, String, String, String).self)
        {
            entries.append(Entry(seq: seq, at: at, actorID: actorID, actorRole: role, action: action, requestID: requestID,
                                 subject: subject, details: details, prevHash: prevHash, hash: hash))
        }
        return entries
    }

    public enum Verification: Sendable, Equatable {
        case valid(events: Int64, lastHash: String)
        case broken(at: Int64)
    }

    /// Recomputes every hash from the stored fields: each event's hash must be SHA-256(previous hash ‖
    /// canonical event), its `prev_hash` the previous event's hash, its `seq` one more than the previous,
    /// and the chain head the last event. The first sequence number where any of this fails is reported.
    public func verify(logger: Logger) async throws -> Verification {
        // The whole log is rehashed: a statement as long as the log, so the longer bound.
        let rows = try await client.withTransaction(logger: logger) { connection in
            try await LongStatements.allow(on: connection, logger: logger)
            let rows = try await connection.query(
                """
                WITH chain AS (
                    SELECT seq, hash, prev_hash,
                           lag(seq) OVER (ORDER BY seq) AS previous_seq,
                           lag(hash) OVER (ORDER BY seq) AS previous_hash,
                           sha256(prev_hash || audit_event_canonical(seq, at, actor_id, actor_role, action, request_id, subject, details)) AS recomputed
                    FROM audit_events
                )
                SELECT
                    (SELECT min(seq) FROM chain
                     WHERE hash <> recomputed
                        OR prev_hash <> coalesce(previous_hash, '\\x0000000000000000000000000000000000000000000000000000000000000000'::bytea)
                        OR seq <> coalesce(previous_seq, 0) + 1),
                    (SELECT count(*) FROM chain),
                    (SELECT encode(hash, 'hex') FROM chain ORDER BY seq DESC LIMIT 1),
                    (SELECT h.seq <> coalesce((SELECT max(seq) FROM audit_events), 0)
                         OR h.hash <> coalesce((SELECT hash FROM audit_events ORDER BY seq DESC LIMIT 1), h.hash)
                     FROM audit_chain_head h)
                """, logger: logger)
            return try await rows.collect()
        }
        guard let row = rows.first else { return .valid(events: 0, lastHash: "") }
        let (broken, count, last, headMismatch) = try row.decode((Int64?, Int64, String?, Bool?).self)
        if let broken { return .broken(at: broken) }
        if headMismatch == true { return .broken(at: count + 1) }
        return .valid(events: count, lastHash: last ?? String(repeating: "0", count: 64))
    }
}
