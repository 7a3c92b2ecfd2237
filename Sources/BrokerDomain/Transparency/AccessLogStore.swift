import Foundation
import Logging
import PostgresNIO

/// The SQL of the people's access log. Written on the transaction of the release it records.
package enum AccessLogStore {
    /// Records a release, unless the person's account is gone (an erasure that committed meanwhile).
    static func record(
        userID: UUID, thirdPartyID: UUID, requestID: UUID, grantID: UUID?, kind: AccessLogEntry.Kind, types: [RequestedType],
        samples: Int64?, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO access_log (user_id, third_party_id, company_name, request_id, kind, types, samples, grant_id)
            SELECT \(userID), t.account_id, t.company_name, \(requestID), \(kind.rawValue), \(types.map(\.code))::int2[], \(samples),
                   \(grantID)
            FROM third_parties t
            WHERE t.account_id = \(thirdPartyID) AND EXISTS (SELECT 1 FROM accounts WHERE id = \(userID))
            """, logger: logger)
    }

    /// Records a correction: the person deleted `samples` samples of `type` from `from` to `to` (nil: open).
    /// The type, the range and the count only: the log never holds a value.
    static func recordCorrection(
        userID: UUID, type: SampleType, from: Date?, to: Date?, samples: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let from = from.map(Timestamp.postgresText)
        let to = to.map(Timestamp.postgresText)
        try await connection.query(
            """
            INSERT INTO access_log (user_id, kind, types, samples, corrected_from, corrected_to)
            VALUES (\(userID), 'correction', \([type.code])::int2[], \(samples), \(from)::timestamptz, \(to)::timestamptz)
            """, logger: logger)
    }

    /// Tells each member whose data went into a release that it contributed to an anonymised aggregate:
    /// once a UTC day per request, however many releases that day (releases are serialised by the ledger
    /// lock, so two cannot both find the day's entry missing). `firstToday`: the caller knows no member has
    /// an entry of the request yet (it was inserted in the caller's transaction), so the probe for one is
    /// skipped.
    static func recordGroupContributions(
        of request: GroupRequest, members: [Int32], firstToday: Bool = false, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO access_log (user_id, third_party_id, company_name, request_id, kind, types, samples)
            SELECT u.account_id, \(request.thirdParty.id), \(request.thirdParty.companyName), \(request.id), 'group',
                   \(request.types.map(\.code))::int2[], NULL
            FROM unnest(\(members)::int4[]) AS n(person_number)
            JOIN users u ON u.person_number = n.person_number
            WHERE \(firstToday)::bool OR NOT EXISTS (
                  SELECT 1 FROM access_log a
                  WHERE a.user_id = u.account_id AND a.request_id = \(request.id) AND a.kind = 'group'
                    AND a.at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
            """, logger: logger)
    }

    /// A page of the person's log, newest first.
    static func list(userID: UUID, after cursor: PageKey?, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> [AccessLogEntry]
    {
        let after = cursor.map { Timestamp.postgresText($0.time) }
        let rows = try await connection.query(
            """
            SELECT id, at, third_party_id, company_name, request_id, kind, types, samples, corrected_from, corrected_to, grant_id FROM access_log
            WHERE user_id = \(userID)
              AND (\(after)::timestamptz IS NULL OR (at, id) < (\(after)::timestamptz, \(cursor?.id)))
            ORDER BY at DESC, id DESC
            LIMIT \(limit + 1)
            """, logger: logger)
        var entries: [AccessLogEntry] = []
        for try await (id, at, thirdParty, company, request, kind, types, samples, correctedFrom, correctedTo, grant)
            in rows.decode((UUID, Date, UUID?, String?, UUID?, String, [Int16], Int64?, Date?, Date?, UUID?).self)
        {
            entries.append(
                AccessLogEntry(
                    id: id, at: at, thirdPartyID: thirdParty, companyName: company, requestID: request,
                    kind: AccessLogEntry.Kind(rawValue: kind) ?? .single, types: types.compactMap(RequestedType.init(code:)),
                    samples: samples, correctedFrom: correctedFrom, correctedTo: correctedTo, grantID: grant))
        }
        return entries
    }
}
