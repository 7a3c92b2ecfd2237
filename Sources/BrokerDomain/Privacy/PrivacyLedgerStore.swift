import Foundation
import Logging
import PostgresNIO

/// The SQL of the privacy ledger: companies' debits per rolling period, each person's loss per month, and
/// the auditors' view of every entry.
enum PrivacyLedgerStore {
    /// One debit decision at a time, server-wide: two releases racing for the last of a budget must see
    /// each other's debit. Bounded by the session's `lock_timeout` (55P03, a 503). The row is read so a
    /// time-out is thrown here, not met by the next statement as "transaction aborted".
    static func lock(on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("SELECT pg_advisory_xact_lock(hashtext('data4help.privacy_ledger'))", logger: logger).collect()
    }

    /// The newest ledger entry (nil for none). Every statement that adds to a person's loss runs in a
    /// transaction that holds `lock` and records a ledger entry (`debit`'s callers), so a newest entry that has
    /// not changed since a reading of the caps means no one's loss has grown since: `GroupRequestService.create`
    /// then need not read the cohort's caps again under the lock. Its time as well as its id: after a failover
    /// the promoted standby may give an id again that an entry lost with the old primary had.
    static func newestEntry(on connection: PostgresConnection, logger: Logger) async throws -> LedgerMark? {
        let rows = try await connection.query("SELECT id, at FROM privacy_ledger ORDER BY id DESC LIMIT 1", logger: logger).collect()
        return try rows.first.map { row in
            let (id, at) = try row.decode((Int64, Date).self)
            return LedgerMark(id: id, at: at)
        }
    }

    /// A ledger entry as `newestEntry` names it.
    struct LedgerMark: Equatable, Sendable {
        var id: Int64
        var at: Date
    }

    /// The company's debits within the last `days` days, oldest first.
    static func companyEntries(_ company: UUID, days: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> [(at: Date, loss: PrivacyLoss)]
    {
        let rows = try await connection.query(
            """
            SELECT at, loss_micro FROM privacy_ledger
            WHERE company_id = \(company) AND at > now() - make_interval(days => \(days)::int4)
            ORDER BY at, id
            """, logger: logger)
        var entries: [(Date, PrivacyLoss)] = []
        for try await (at, micro) in rows.decode((Date, Int64).self) { entries.append((at, PrivacyLoss(micro: micro))) }
        return entries
    }

    static func record(
        company: UUID?, request: UUID?, kind: LedgerEntry.Kind, cells: Int, loss: PrivacyLoss, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO privacy_ledger (company_id, request_id, kind, cells, loss_micro)
            VALUES (\(company), \(request), \(kind.rawValue), \(cells), \(loss.micro))
            """, logger: logger)
    }

    /// The members of `cohort` whose loss over the last twelve calendar months plus `cost` stays within `cap`
    /// (Feldman and Zrnic 2021: a person whose budget is spent is left out, and only their own loss decides),
    /// and whose loss to `company` over the same months plus `cost` stays within `share`. One statement: a
    /// member's two sums are index lookups (`privacy_person_loss`'s key, and the share's index on
    /// (company_id, person_number, month)), so a cohort of ten thousand is one pass.
    static func withinCapAndShare(
        _ cohort: [Int32], cost: PrivacyLoss, cap: PrivacyLoss, company: UUID, share: PrivacyLoss, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [Int32] {
        try await connection.query(
            """
            SELECT coalesce(array_agg(c.n ORDER BY c.n), '{}') FROM unnest(\(cohort)::int4[]) AS c(n)
            WHERE coalesce((SELECT sum(l.loss_micro) FROM privacy_person_loss l
                            WHERE l.person_number = c.n AND l.month >= \(unescaped: twelveMonths)), 0) + \(cost.micro) <= \(cap.micro)
              AND coalesce((SELECT sum(r.loss_micro) FROM privacy_person_request_loss r
                            WHERE r.company_id = \(company) AND r.person_number = c.n AND r.month >= \(unescaped: twelveMonths)), 0)
                  + \(cost.micro) <= \(share.micro)
            """, logger: logger
        ).collect().first?.decode([Int32].self) ?? []
    }

    /// SQL for "no earlier than the first day of the month eleven months ago".
    static let twelveMonths = "(date_trunc('month', now() AT TIME ZONE 'UTC') - interval '11 months')::date"

    /// Adds `loss` to each member's current month: to their total (what the cap is checked against) and to
    /// the request's line (what the company's share and the person's own page read), in one statement so the
    /// two never disagree. Callers hold `lock` and record the ledger entry of the debit in the same
    /// transaction: `newestEntry` relies on it.
    static func debit(
        _ cohort: [Int32], loss: PrivacyLoss, company: UUID, request: UUID, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            WITH totals AS (
                INSERT INTO privacy_person_loss (person_number, month, loss_micro)
                SELECT n, date_trunc('month', now() AT TIME ZONE 'UTC')::date, \(loss.micro) FROM unnest(\(cohort)::int4[]) AS n
                ON CONFLICT (person_number, month) DO UPDATE SET loss_micro = privacy_person_loss.loss_micro + excluded.loss_micro
            )
            INSERT INTO privacy_person_request_loss (person_number, month, company_id, request_id, loss_micro)
            SELECT n, date_trunc('month', now() AT TIME ZONE 'UTC')::date, \(company), \(request), \(loss.micro)
            FROM unnest(\(cohort)::int4[]) AS n
            ON CONFLICT (person_number, request_id, month)
            DO UPDATE SET loss_micro = privacy_person_request_loss.loss_micro + excluded.loss_micro
            """, logger: logger)
    }

    /// One person's loss over the last twelve calendar months.
    static func personLoss(_ person: Int32, on connection: PostgresConnection, logger: Logger) async throws -> PrivacyLoss {
        let micro =
            try await connection.query(
                """
                SELECT coalesce(sum(loss_micro), 0)::int8 FROM privacy_person_loss
                WHERE person_number = \(person) AND month >= \(unescaped: twelveMonths)
                """, logger: logger
            ).collect().first?.decode(Int64.self) ?? 0
        return PrivacyLoss(micro: micro)
    }

    /// Entries newest first, for auditors (all) or one company.
    static func entries(company: UUID?, after cursor: Int64?, limit: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> [LedgerEntry]
    {
        let rows = try await connection.query(
            """
            SELECT id, at, company_id, request_id, kind, cells, loss_micro FROM privacy_ledger
            WHERE (\(company)::uuid IS NULL OR company_id = \(company)) AND (\(cursor)::int8 IS NULL OR id < \(cursor))
            ORDER BY id DESC LIMIT \(limit + 1)
            """, logger: logger)
        var entries: [LedgerEntry] = []
        for try await (id, at, company, request, kind, cells, micro) in rows.decode((Int64, Date, UUID?, UUID?, String, Int32, Int64).self) {
            entries.append(
                LedgerEntry(
                    id: id, at: at, companyID: company, requestID: request, kind: LedgerEntry.Kind(rawValue: kind) ?? .release,
                    cells: Int(cells), loss: PrivacyLoss(micro: micro)))
        }
        return entries
    }

    /// What peer statistics published from `since` to before `until` cost each person at most: the sum of
    /// their ledger entries. Without bounds, the last twelve calendar months by the database's clock, as the
    /// reserve is checked (`PeerStatistics.publish`); a person's page passes its own months.
    static func peerStatisticsLoss(since: Date? = nil, until: Date? = nil, on connection: PostgresConnection, logger: Logger) async throws
        -> PrivacyLoss
    {
        let micro =
            try await connection.query(
                """
                SELECT coalesce(sum(loss_micro), 0)::int8 FROM privacy_ledger
                WHERE kind = \(LedgerEntry.Kind.peerStatistics.rawValue)
                  AND at >= coalesce(\(since)::timestamptz, \(unescaped: twelveMonths)) AND (\(until)::timestamptz IS NULL OR at < \(until))
                """, logger: logger
            ).collect().first?.decode(Int64.self) ?? 0
        return PrivacyLoss(micro: micro)
    }
}
