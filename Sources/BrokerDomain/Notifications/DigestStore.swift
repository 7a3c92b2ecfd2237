import Foundation
import Logging
import PostgresNIO

/// The SQL of the weekly digest: the week's row (whose lock a batch holds) and each batch of people with
/// what their data contributed to that week, read with their mail settings in one statement.
enum DigestStore {
    struct Person: Sendable {
        var accountID: UUID
        var email: String
        var language: Language
        var timeZone: String?
        /// Group requests the person's data contributed to in the week, and their companies.
        var requests: Int
        var companies: [String]
    }

    /// What the week's row says to a batch that wants to write.
    enum Week {
        /// Locked by this transaction: continue after `after` (nil: from the start).
        case open(after: UUID?, written: Int)
        /// Another instance is writing a batch of it now.
        case busy
        /// Every batch is written.
        case done
    }

    /// Adds the week (nothing if it is there) and locks its row unless another instance holds it.
    static func lockWeek(_ weekStart: CalendarDate, on connection: PostgresConnection, logger: Logger) async throws -> Week {
        let day = weekStart.description
        try await connection.query(
            "INSERT INTO mail_digest_weeks (week_start) VALUES (\(day)::date) ON CONFLICT DO NOTHING", logger: logger)
        let rows = try await connection.query(
            "SELECT after_account, written, done FROM mail_digest_weeks WHERE week_start = \(day)::date FOR UPDATE SKIP LOCKED",
            logger: logger)
        for try await (after, written, done) in rows.decode((UUID?, Int32, Bool).self) {
            return done ? .done : .open(after: after, written: Int(written))
        }
        return .busy
    }

    /// The next `limit` active people after `after` whose data contributed to a group request in
    /// [from, to), who have the digest on.
    static func people(from: Date, to: Date, after: UUID?, limit: Int, on connection: PostgresConnection, logger: Logger) async throws
        -> (people: [Person], last: UUID?)
    {
        let start = after ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let rows = try await connection.query(
            """
            WITH contributors AS (
                SELECT l.user_id, count(DISTINCT l.request_id) AS requests, array_agg(DISTINCT l.company_name) AS companies
                FROM access_log l
                WHERE l.kind = 'group' AND l.at >= \(from) AND l.at < \(to) AND l.user_id > \(start)
                GROUP BY l.user_id
                ORDER BY l.user_id
                LIMIT \(limit)
            )
            SELECT c.user_id, a.email, a.language, u.time_zone, c.requests, c.companies,
                   a.status = 'active' AND NOT EXISTS (
                       SELECT 1 FROM mail_opt_outs o WHERE o.account_id = c.user_id AND o.kind = \(MailKind.weeklyDigest.rawValue))
            FROM contributors c JOIN accounts a ON a.id = c.user_id LEFT JOIN users u ON u.account_id = c.user_id
            ORDER BY c.user_id
            """, logger: logger)
        var people: [Person] = []
        var last: UUID?
        for try await (id, email, language, zone, requests, companies, wanted)
            in rows.decode((UUID, String, String, String?, Int64, [String], Bool).self)
        {
            last = id
            guard wanted else { continue }
            people.append(
                Person(
                    accountID: id, email: email, language: Language(rawValue: language) ?? .en, timeZone: zone, requests: Int(requests),
                    companies: companies))
        }
        return (people, last)
    }

    /// Records how far the week got; `done` when this was the last batch.
    static func advance(
        _ weekStart: CalendarDate, after: UUID?, written: Int, done: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE mail_digest_weeks SET after_account = \(after), written = written + \(written), done = \(done)
            WHERE week_start = \(weekStart.description)::date
            """, logger: logger)
    }
}
