import Foundation
import Logging
import PostgresNIO

/// `GET /v1/me/export`: everything held about the caller as one JSON document, written in chunks so a
/// person with years of samples never needs the whole document in memory.
public struct PersonalExport: Sendable {
    public let client: PostgresClient

    public init(client: PostgresClient) { self.client = client }

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

            var cursor: PageCursor?
            var first = true
            repeat {
                let page = try await SingleRequestStore.list(
                    accountID: principal.accountID, asSender: principal.role == .thirdParty, status: nil, after: cursor,
                    limit: 1000, on: connection, logger: logger)
                for request in page.prefix(1000) {
                    if !first { out.append(UInt8(ascii: ",")) }
                    out += try requestsJSON(request)
                    first = false
                    await flushIfFull()
                }
                cursor = page.count > 1000 ? page.prefix(1000).last.map { PageCursor(time: $0.createdAt, id: $0.id) } : nil
            } while cursor != nil

            out += Array(#"],"accessLog":["#.utf8)
            if principal.role == .user {
                first = true
                repeat {
                    let page = try await AccessLogStore.list(userID: principal.accountID, after: cursor, limit: 1000, on: connection, logger: logger)
                    for entry in page.prefix(1000) {
                        if !first { out.append(UInt8(ascii: ",")) }
                        out += try accessLogJSON(entry)
                        first = false
                        await flushIfFull()
                    }
                    cursor = page.count > 1000 ? page.prefix(1000).last.map { PageCursor(time: $0.at, id: $0.id) } : nil
                } while cursor != nil
            }

            out += Array(#"],"samples":["#.utf8)
            if principal.role == .user {
                let rows = try await connection.query(
                    "SELECT type, at, value FROM samples WHERE user_id = \(principal.accountID) ORDER BY at, type", logger: logger)
                first = true
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
