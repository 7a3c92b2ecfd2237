import Foundation
import Logging
import PostgresNIO

/// The SQL of the audit log: `audit_events` and its chain head. Appending goes through the database's
/// `append_audit_event`, which numbers and chains the event under the head's row lock; reading is plain.
enum AuditEventStore {
    /// Appends one event on the caller's transaction; returns its sequence number.
    static func append(_ event: AuditEvent, detailsJSON: String, on connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        try await connection.query(
            """
            SELECT append_audit_event(\(event.actorID), \(event.actorRole), \(event.action),
                                      \(event.requestID), \(event.subject), \(detailsJSON)::jsonb)
            """, logger: logger
        ).collect().first?.decode(Int64.self)
    }

    /// Up to `limit` events after `afterSeq` that match `query`, oldest first, as auditors see them.
    static func entries(_ query: AuditTrail.Query, afterSeq: Int64?, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> [AuditTrail.Entry]
    {
        let from = query.from.map(Timestamp.postgresText)
        let to = query.to.map(Timestamp.postgresText)
        let rows = try await connection.query(
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
        var entries: [AuditTrail.Entry] = []
        for try await (seq, at, actorID, role, action, requestID, subject, details, prevHash, hash)
            in rows.decode((Int64, Date, String?, String, String, UUID?, String?, String, String, String).self)
        {
            entries.append(
                AuditTrail.Entry(
                    seq: seq, at: at, actorID: actorID, actorRole: role, action: action, requestID: requestID,
                    subject: subject, details: details, prevHash: prevHash, hash: hash))
        }
        return entries
    }

    /// Makes the caller's (new) transaction one read-only snapshot: events appended meanwhile are not seen.
    static func readOneSnapshot(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
    }

    /// The stored hash of event `seq`, if there is such an event.
    static func hash(ofEvent seq: Int64, on connection: PostgresConnection, logger: Logger) async throws -> [UInt8]? {
        try await connection.query("SELECT hash FROM audit_events WHERE seq = \(seq)", logger: logger)
            .collect().first.map { Array(try $0.decode(ByteBuffer.self).readableBytesView) }
    }

    /// The chain head: the last event's number and hash (none before the first event of a new log).
    static func chainHead(on connection: PostgresConnection, logger: Logger) async throws -> (seq: Int64, hash: [UInt8])? {
        try await connection.query("SELECT seq, hash FROM audit_chain_head", logger: logger).collect().first.map { row in
            let (seq, hash) = try row.decode((Int64, ByteBuffer).self)
            return (seq, Array(hash.readableBytesView))
        }
    }

    /// Up to `limit` events after `seq`, oldest first, with every field as the chain hashes it (the time as
    /// canonical UTC text, so no conversion in between can change a hash).
    static func links(after seq: Int64, limit: Int, on connection: PostgresConnection, logger: Logger) async throws -> [AuditChain.Link] {
        let rows = try await connection.query(
            """
            SELECT seq, pg_catalog.to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), actor_id, actor_role,
                   action, request_id::text, subject, details::text, prev_hash, hash
            FROM audit_events WHERE seq > \(seq) ORDER BY seq LIMIT \(limit)
            """, logger: logger)
        var links: [AuditChain.Link] = []
        for try await (seq, at, actorID, role, action, requestID, subject, details, prevHash, hash)
            in rows.decode((Int64, String, String?, String, String, String?, String?, String, ByteBuffer, ByteBuffer).self)
        {
            links.append(
                AuditChain.Link(
                    seq: seq, at: at, actorID: actorID, actorRole: role, action: action, requestID: requestID, subject: subject,
                    details: details, prevHash: Array(prevHash.readableBytesView), hash: Array(hash.readableBytesView)))
        }
        return links
    }
}
