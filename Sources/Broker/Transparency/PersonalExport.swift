import Foundation
import Logging
import PostgresNIO

/// `GET /v1/me/export`: everything held about the caller as one JSON document, written in chunks so a
/// person with years of samples never needs the whole document in memory.
public struct PersonalExport: Sendable {
    public let client: PostgresClient

    public init(client: PostgresClient) { self.client = client }

    /// Rows read per query for the requests and the access log.
    static let page = 1000

    /// Writes `{exportedAt, profile, requests, accessLog, samples}`; the JSON pieces of the profile, the
    /// requests and the access log come already encoded from the HTTP layer's types.
    public func stream(
        for principal: Principal, profileJSON: [UInt8], requestsJSON: @Sendable (SingleRequest) throws -> [UInt8],
        accessLogJSON: @Sendable (AccessLogEntry) throws -> [UInt8], logger: Logger,
        send: @Sendable ([UInt8]) async -> Void
    ) async throws {
        try await client.withTransaction(logger: logger) { connection in
            var out: [UInt8] = []
            out.reserveCapacity(ReleasedSampleEncoder.chunkSize + 1024)
            func flushIfFull() async {
                guard out.count >= ReleasedSampleEncoder.chunkSize else { return }
                await send(out)
                out.removeAll(keepingCapacity: true)
            }
            out += Array(#"{"exportedAt":""#.utf8)
            Timestamp.appendRFC3339(Date(), to: &out)
            out += Array(#"","profile":"#.utf8) + profileJSON + Array(#","requests":["#.utf8)

            /// Writes every row of a paged list, page by page, separated by commas.
            func writeAll<Row>(
                page: (PageCursor?) async throws -> [Row], cursor: (Row) -> PageCursor, json: (Row) throws -> [UInt8]
            ) async throws {
                var after: PageCursor?
                var first = true
                repeat {
                    let rows = try await page(after)
                    for row in rows.prefix(Self.page) {
                        if !first { out.append(UInt8(ascii: ",")) }
                        out += try json(row)
                        first = false
                        await flushIfFull()
                    }
                    after = rows.count > Self.page ? rows.prefix(Self.page).last.map(cursor) : nil
                } while after != nil
            }
            try await writeAll(
                page: { try await SingleRequestStore.list(
                    accountID: principal.accountID, asSender: principal.role == .thirdParty, status: nil, after: $0,
                    limit: Self.page, on: connection, logger: logger) },
                cursor: { PageCursor(time: $0.createdAt, id: $0.id) }, json: requestsJSON)
            out += Array(#"],"accessLog":["#.utf8)
            if principal.role == .user {
                try await writeAll(
                    page: { try await AccessLogStore.list(userID: principal.accountID, after: $0, limit: Self.page, on: connection, logger: logger) },
                    cursor: { PageCursor(time: $0.at, id: $0.id) }, json: accessLogJSON)
            }

            out += Array(#"],"samples":["#.utf8)
            if principal.role == .user {
                let rows = try await connection.query(
                    "SELECT type, at, value FROM samples WHERE user_id = \(principal.accountID) ORDER BY at, type", logger: logger)
                var first = true
                for try await (code, at, value) in rows.decode((Int16, Date, Double).self) {
                    guard let type = SampleType(code: code) else { continue }
                    out += Array((first ? #"{"type":""# : #",{"type":""#).utf8) + Array(type.rawValue.utf8)
                    out += Array(#"","value":"#.utf8) + Array(ReleasedSampleEncoder.number(value).utf8) + Array(#","at":""#.utf8)
                    Timestamp.appendRFC3339(at, to: &out)
                    out += Array(#""}"#.utf8)
                    first = false
                    await flushIfFull()
                }
            }
            out += Array("]}".utf8)
            await send(out)
        }
    }
}
