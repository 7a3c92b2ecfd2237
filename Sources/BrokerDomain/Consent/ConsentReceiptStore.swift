import Foundation
import Logging
import PostgresNIO

/// The SQL of consent receipts. Written on the transaction of the change each records.
enum ConsentReceiptStore {
    static func insert(
        _ receipt: ConsentReceipt, userID: UUID, thirdPartyID: UUID, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO consent_receipts (id, request_id, grant_id, user_id, third_party_id, status, issued_at, jws)
            VALUES (\(receipt.id), \(receipt.requestID), \(receipt.grantID), \(userID), \(thirdPartyID), \(receipt.status.rawValue),
                    \(Timestamp.postgresText(receipt.issuedAt))::timestamptz, \(receipt.jws))
            """, logger: logger)
    }

    /// A page of the person's receipts, newest first.
    static func list(userID: UUID, after cursor: PageKey?, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> [ConsentReceipt]
    {
        let after = cursor.map { Timestamp.postgresText($0.time) }
        return try await collect(
            connection.query(
                """
                SELECT id, request_id, grant_id, status, issued_at, jws FROM consent_receipts
                WHERE user_id = \(userID)
                  AND (\(after)::timestamptz IS NULL OR (issued_at, id) < (\(after)::timestamptz, \(cursor?.id)))
                ORDER BY issued_at DESC, id DESC
                LIMIT \(limit + 1)
                """, logger: logger))
    }

    /// One request's receipts, oldest first (a request has a few: its grant, then its end).
    static func list(requestID: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [ConsentReceipt] {
        try await collect(
            connection.query(
                """
                SELECT id, request_id, grant_id, status, issued_at, jws FROM consent_receipts
                WHERE request_id = \(requestID) ORDER BY issued_at, id
                """, logger: logger))
    }

    /// One receipt, if it is the account's: the person's own, or one of the company's requests.
    static func receipt(id: UUID, visibleTo accountID: UUID, on connection: PostgresConnection, logger: Logger) async throws
        -> ConsentReceipt?
    {
        try await collect(
            connection.query(
                """
                SELECT id, request_id, grant_id, status, issued_at, jws FROM consent_receipts
                WHERE id = \(id) AND (user_id = \(accountID) OR third_party_id = \(accountID))
                """, logger: logger)
        ).first
    }

    private static func collect(_ rows: PostgresRowSequence) async throws -> [ConsentReceipt] {
        var receipts: [ConsentReceipt] = []
        for try await (id, request, grant, status, issuedAt, jws) in rows.decode((UUID, UUID, UUID, String, Date, String).self) {
            // Written by this server only (`insert`), from claims it encoded: a row that does not read back is a bug.
            guard let status = ConsentReceiptStatus(rawValue: status), let claims = ConsentReceipts.unverifiedClaims(of: jws) else {
                throw ConsentReceiptUnreadable(id: id)
            }
            receipts.append(
                ConsentReceipt(id: id, requestID: request, grantID: grant, status: status, issuedAt: issuedAt, jws: jws, claims: claims))
        }
        return receipts
    }
}
