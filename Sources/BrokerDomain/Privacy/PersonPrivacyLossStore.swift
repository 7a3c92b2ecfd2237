import Foundation
import Logging
import PostgresNIO

/// The SQL of a person's own view of the ledger (`PersonPrivacy`): only their own rows. (The peer statistics
/// entries, the same for everyone, are `PrivacyLedgerStore.peerStatisticsLoss`.)
enum PersonPrivacyLossStore {
    /// The person's group loss per month from `from` to `through` (first days of months), as the cap is
    /// checked against it; months without a debit are absent.
    static func months(account: UUID, from: CalendarDate, through: CalendarDate, on connection: PostgresConnection, logger: Logger)
        async throws -> [String: PrivacyLoss]
    {
        let rows = try await connection.query(
            """
            SELECT l.month::text, l.loss_micro FROM privacy_person_loss l
            JOIN users u ON u.person_number = l.person_number
            WHERE u.account_id = \(account) AND l.month BETWEEN \(from.description)::date AND \(through.description)::date
            """, logger: logger)
        var months: [String: PrivacyLoss] = [:]
        for try await (month, micro) in rows.decode((String, Int64).self) { months[month] = PrivacyLoss(micro: micro) }
        return months
    }

    /// The same months' debits by group request, newest first (by the last month each spent something in).
    /// The company is named as the person's access log names it; a request the log does not list (only the
    /// group's size was released) by the company's name now, or "Erased company".
    static func requests(account: UUID, from: CalendarDate, through: CalendarDate, on connection: PostgresConnection, logger: Logger)
        async throws -> [PersonPrivacyLoss.Request]
    {
        let rows = try await connection.query(
            """
            SELECT r.request_id, r.loss_micro, logged.company_name, coalesce(t.company_name, \(SingleRequestStore.erasedCompanyName))
            FROM (
                SELECT l.request_id, l.company_id, sum(l.loss_micro)::int8 AS loss_micro, max(l.month) AS latest
                FROM privacy_person_request_loss l
                JOIN users u ON u.person_number = l.person_number
                WHERE u.account_id = \(account) AND l.month BETWEEN \(from.description)::date AND \(through.description)::date
                GROUP BY l.request_id, l.company_id
            ) r
            LEFT JOIN third_parties t ON t.account_id = r.company_id
            LEFT JOIN LATERAL (
                SELECT a.company_name FROM access_log a
                WHERE a.request_id = r.request_id AND a.user_id = \(account) AND a.kind = 'group'
                ORDER BY a.at DESC LIMIT 1
            ) logged ON true
            ORDER BY r.latest DESC, r.request_id
            """, logger: logger)
        var requests: [PersonPrivacyLoss.Request] = []
        for try await (request, micro, logged, current) in rows.decode((UUID, Int64, String?, String).self) {
            requests.append(
                PersonPrivacyLoss.Request(
                    requestID: request, companyName: logged ?? current, contribution: logged == nil ? .cohortSize : .results,
                    loss: PrivacyLoss(micro: micro)))
        }
        return requests
    }
}
