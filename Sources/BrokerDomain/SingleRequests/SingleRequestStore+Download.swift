import Foundation
import Logging
import PostgresNIO

extension SingleRequestStore {
    /// The request (if the account sent it) and the highest arrival number it may release now:
    /// - a one-off request: what had arrived when it was accepted;
    /// - a subscription ended by either side: what had arrived when it ended;
    /// - an expired subscription: what arrived before `endsAt` (from the upload times, so no job is needed);
    /// - a live subscription: everything that has arrived.
    static func releaseBound(requestID: UUID, sender: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> (request: SingleRequest, bound: Int64)?
    {
        let rows = try await connection.query(
            """
            \(unescaped: selection),
                CASE
                    WHEN r.user_id IS NULL OR r.status <> 'accepted' THEN 0
                    WHEN r.subscription_days IS NULL THEN r.accepted_arrival
                    WHEN r.ended_at IS NOT NULL THEN r.ended_arrival
                    WHEN r.ends_at <= now() THEN coalesce(
                        (SELECT max(b.last_arrival) FROM sample_batches b WHERE b.user_id = r.user_id AND b.received_at < r.ends_at), 0)
                    ELSE coalesce((SELECT a.last_arrival FROM sample_arrivals a WHERE a.user_id = r.user_id), 0)
                END AS bound
            FROM single_requests r LEFT JOIN third_parties t ON t.account_id = r.third_party_id
            WHERE r.id = \(requestID) AND r.third_party_id = \(sender)
            """, logger: logger)
        guard let row = try await rows.collect().first else { return nil }
        return (try request(from: row), try row.makeRandomAccess()["bound"].decode(Int64.self))
    }

    /// The arrival number of the last sample the request releases among those up to `bound` (0 if none):
    /// the requested types the person shares, inside the window. Read backwards along (user, arrival), per
    /// partition. The requested types less the unshared ones are worked out by the statement itself (an
    /// init plan, run once), as in every statement below: a type unshared since the request was granted
    /// moves neither the bound nor the cursor. Written as `type = ANY(<that list>)` rather than a second
    /// filter (`type <> ALL(…)`), whose guessed selectivity turned the chunks' ordered index scans under
    /// their LIMIT into a bitmap scan and sort of the person's whole range (4× slower at 40,000 rows, and growing).
    static func lastReleasedArrival(
        userID: UUID, types: [SampleType], from: Date?, to: Date?, upTo bound: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64 {
        let from = from.map(Timestamp.postgresText)
        let to = to.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            SELECT coalesce(max(arrival), 0) FROM samples
            WHERE user_id = \(userID) AND arrival <= \(bound)
              AND type = ANY(ARRAY(
                  SELECT t FROM unnest(\(types.map(\.code))::int2[]) AS t
                  WHERE NOT EXISTS (SELECT 1 FROM unshared_types u WHERE u.user_id = \(userID) AND u.type = t)))
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
            """, logger: logger)
        return try await rows.collect().first?.decode(Int64.self) ?? 0
    }

    /// The requested types the person shares that have any sample in the window up to the bound.
    static func availableTypes(
        userID: UUID, types: [SampleType], from: Date?, to: Date?, bound: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> [SampleType] {
        let from = from.map(Timestamp.postgresText)
        let to = to.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            SELECT t FROM unnest(\(types.map(\.code))::int2[]) AS t
            WHERE NOT EXISTS (SELECT 1 FROM unshared_types u WHERE u.user_id = \(userID) AND u.type = t)
              AND EXISTS (
                SELECT 1 FROM samples s
                WHERE s.user_id = \(userID) AND s.type = t AND s.arrival <= \(bound)
                  AND (\(from)::timestamptz IS NULL OR s.at >= \(from)::timestamptz)
                  AND (\(to)::timestamptz IS NULL OR s.at <= \(to)::timestamptz))
            ORDER BY t
            """, logger: logger)
        var available: [SampleType] = []
        for try await code in rows.decode(Int16.self) { if let type = SampleType(code: code) { available.append(type) } }
        return available
    }

    /// The next `limit` released samples after arrival number `after`, as three parallel arrays in arrival
    /// order, plus the last arrival number among them (nil when none is left). One row per chunk keeps the
    /// per-sample cost to decoding array elements: streaming a row per sample through the driver costs
    /// several times more than PostgreSQL's own COPY.
    ///
    /// Each chunk leaves out the types the person does not share as of its own statement: a preference
    /// saved while a download streams releases none of that type's rows read after it, whatever the plan
    /// said when the download began.
    static func releasedChunk(_ plan: DownloadPlan, after: Int64, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> ReleasedChunk?
    {
        let statement = ReleasedChunkStatement(
            userID: plan.userID, after: after, bound: plan.bound, types: plan.request.types.map(\.code),
            from: plan.request.windowFrom.map(Timestamp.postgresText), to: plan.request.windowTo.map(Timestamp.postgresText),
            limit: Int64(limit))
        // `preparedRows` closes the connection when the statement fails, so a failed preparation is not kept.
        return try await connection.preparedRows(statement, logger: logger).last ?? nil
    }

    /// `releasedChunk`'s statement, prepared once per connection. Planned afresh for every chunk of 10,000
    /// samples, over `samples` and each of its monthly partitions, it cost 0.6–1 ms on a warm connection and
    /// 9–40 ms on a fresh one, beside 5–10 ms to run it. Prepared, PostgreSQL plans it for each of its first
    /// five runs on a connection and then keeps a generic plan (the same ordered index scans under the
    /// `LIMIT`).
    struct ReleasedChunkStatement: PostgresPreparedStatement {
        static let name = "d4h_released_chunk"
        // The subquery's order is the aggregates' input order (no parallel plan for a LIMIT over an ordered scan).
        static let sql = """
            SELECT array_agg(type), array_agg(at), array_agg(value), max(arrival) FROM (
                SELECT type, at, value, arrival FROM samples
                WHERE user_id = $1 AND arrival > $2 AND arrival <= $3
                  AND type = ANY(ARRAY(
                      SELECT t FROM unnest($4::int2[]) AS t
                      WHERE NOT EXISTS (SELECT 1 FROM unshared_types u WHERE u.user_id = $1 AND u.type = t)))
                  AND ($5::text::timestamptz IS NULL OR at >= $5::text::timestamptz)
                  AND ($6::text::timestamptz IS NULL OR at <= $6::text::timestamptz)
                ORDER BY arrival
                LIMIT $7
            ) chunk
            """
        static let bindingDataTypes: [PostgresDataType] = [.uuid, .int8, .int8, .int2Array, .text, .text, .int8]
        typealias Row = ReleasedChunk?
        var userID: UUID
        var after: Int64
        var bound: Int64
        var types: [Int16]
        /// The window's bounds as exact microsecond text (`Timestamp.postgresText`): binding a Date truncates.
        var from: String?
        var to: String?
        var limit: Int64

        func makeBindings() -> PostgresBindings {
            var binds = PostgresBindings()
            binds.append(userID)
            binds.append(after)
            binds.append(bound)
            binds.append(types)
            if let from { binds.append(from) } else { binds.appendNull() }
            if let to { binds.append(to) } else { binds.appendNull() }
            binds.append(limit)
            return binds
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let columns = row.makeRandomAccess()
            guard let last = try columns[3].decode(Int64?.self) else { return nil }
            return try ReleasedChunk(codes: columns[0].bytes, times: columns[1].bytes, values: columns[2].bytes, lastArrival: last)
        }
    }
}
