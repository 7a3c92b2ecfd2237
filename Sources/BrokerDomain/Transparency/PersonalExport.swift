import Foundation
import Logging
import PostgresNIO

/// `GET /v1/me/export`: everything held about the caller as one JSON document, written in chunks so a
/// person with years of samples never needs the whole document in memory.
package struct PersonalExport: Sendable {
    package let client: DatabasePool
    /// The document's `exportedAt`.
    let clock: WallClock

    package init(client: DatabasePool, clock: WallClock = .system) {
        self.client = client
        self.clock = clock
    }

    /// Rows read per query for the requests and the access log.
    static let page = 1000

    /// Writes `{exportedAt, profile, requests, accessLog, samples, positions}`; the JSON pieces of the profile, the
    /// requests and the access log come already encoded from the HTTP layer's types. Stops early (the
    /// document then ends unfinished) when `send` answers that the receiver is gone.
    ///
    /// Every page is read on a lease of its own, so no connection waits on the client's socket: a slow
    /// reader of a large export costs the pool nothing while it reads.
    package func stream(
        for principal: Principal, profileJSON: [UInt8], requestsJSON: @Sendable (SingleRequest) throws -> [UInt8],
        accessLogJSON: @Sendable (AccessLogEntry) throws -> [UInt8], logger: Logger,
        send: @Sendable ([UInt8]) async -> Bool
    ) async throws {
        var out: [UInt8] = []
        out.reserveCapacity(ReleasedSampleEncoder.chunkSize + 1024)
        struct ReceiverGone: Error {}
        func flushIfFull() async throws {
            guard out.count >= ReleasedSampleEncoder.chunkSize else { return }
            guard await send(out) else { throw ReceiverGone() }
            out.removeAll(keepingCapacity: true)
        }
        out += Array(#"{"exportedAt":""#.utf8)
        Timestamp.appendRFC3339(clock.now, to: &out)
        out += Array(#"","profile":"#.utf8) + profileJSON + Array(#","requests":["#.utf8)

        /// Writes every row of a paged list, page by page, separated by commas.
        func writeAll<Row>(
            page: @escaping (PageKey?, PostgresConnection) async throws -> [Row], cursor: (Row) -> PageKey,
            json: (Row) throws -> [UInt8]
        ) async throws {
            var after: PageKey?
            var first = true
            repeat {
                let rows = try await client.withConnection { [after] in try await page(after, $0) }
                for row in rows.prefix(Self.page) {
                    if !first { out.append(UInt8(ascii: ",")) }
                    out += try json(row)
                    first = false
                    try await flushIfFull()
                }
                after = rows.count > Self.page ? rows.prefix(Self.page).last.map(cursor) : nil
            } while after != nil
        }
        do {
            try await writeAll(
                page: {
                    try await SingleRequestStore.list(
                        accountID: principal.accountID, asSender: principal.role == .thirdParty, status: nil, after: $0,
                        limit: Self.page, on: $1, logger: logger)
                },
                cursor: { PageKey(time: $0.createdAt, id: $0.id) }, json: requestsJSON)
            out += Array(#"],"accessLog":["#.utf8)
            if principal.role == .user {
                try await writeAll(
                    page: { try await AccessLogStore.list(userID: principal.accountID, after: $0, limit: Self.page, on: $1, logger: logger) },
                    cursor: { PageKey(time: $0.at, id: $0.id) }, json: accessLogJSON)
            }
            out += Array(#"],"samples":["#.utf8)
            if principal.role == .user {
                var first = true
                var after: SampleCursor?
                repeat {
                    let samples = try await client.withConnection { [after] in
                        try await SampleStore.exportPage(userID: principal.accountID, after: after, limit: Self.samplePage, on: $0, logger: logger)
                    }
                    for sample in samples {
                        out += Array((first ? #"{"type":""# : #",{"type":""#).utf8) + Array(sample.type.rawValue.utf8)
                        out += Array(#"","value":"#.utf8) + Array(ReleasedSampleEncoder.number(sample.value).utf8) + Array(#","at":""#.utf8)
                        Timestamp.appendRFC3339(sample.at, to: &out)
                        out += Array(#""}"#.utf8)
                        first = false
                        try await flushIfFull()
                    }
                    after = samples.count == Self.samplePage ? samples.last.map { SampleCursor(at: $0.at, type: $0.type) } : nil
                } while after != nil
            }
            out += Array(#"],"positions":["#.utf8)
            if principal.role == .user {
                var first = true
                var after: Date?
                repeat {
                    let page = try await client.withConnection { [after] in
                        try await PositionStore.list(
                            userID: principal.accountID, from: nil, to: nil, after: after, limit: Self.samplePage, on: $0, logger: logger)
                    }
                    for position in page.positions {
                        out += Array((first ? #"{"at":""# : #",{"at":""#).utf8)
                        Timestamp.appendRFC3339(position.at, to: &out)
                        out += Array(#"","latitude":"#.utf8) + Array(ReleasedSampleEncoder.number(position.latitude).utf8)
                        out += Array(#","longitude":"#.utf8) + Array(ReleasedSampleEncoder.number(position.longitude).utf8)
                        if let elevation = position.elevation {
                            out += Array(#","elevation":"#.utf8) + Array(ReleasedSampleEncoder.number(elevation).utf8)
                        }
                        if let accuracy = position.accuracy {
                            out += Array(#","accuracy":"#.utf8) + Array(ReleasedSampleEncoder.number(accuracy).utf8)
                        }
                        out += Array("}".utf8)
                        first = false
                        try await flushIfFull()
                    }
                    after = page.next
                } while after != nil
            }
            out += Array("]}".utf8)
            _ = await send(out)
        } catch is ReceiverGone {
            return
        }
    }

    /// Samples read per query.
    static let samplePage = 10_000

    /// The person's samples as FHIR R4 Observations (`docs/fhir.md`), a Bundle or NDJSON: what a hospital's
    /// system or another app reads. The profile, requests and positions are not Observations and stay in the
    /// JSON export. Observations name the person by their account, which is theirs to give.
    package func streamObservations(
        of userID: UUID, form: FHIRObservationEncoder.Form, logger: Logger, send: @Sendable ([UInt8]) async -> Bool
    ) async throws {
        var encoder = FHIRObservationEncoder(form: form, subject: .account(userID), idPrefix: "me", timestamp: clock.now)
        var after: SampleCursor?
        repeat {
            let samples = try await client.withConnection { [after] in
                try await SampleStore.exportPage(userID: userID, after: after, limit: Self.samplePage, on: $0, logger: logger)
            }
            // In (time, type) order, so a blood pressure pair sits side by side: only a pair split by the
            // page's end is written as two Observations.
            let codes = samples.map(\.type.code)
            let times = samples.map { DownloadBytes.micros($0.at) }
            let values = samples.map(\.value)
            encoder.begin(codes: codes, times: times)
            for row in samples.indices {
                _ = encoder.append(codes: codes, times: times, values: values, row: row)
                if encoder.isChunkFull {
                    guard await send(encoder.takeChunk()) else { return }
                }
            }
            after = samples.count == Self.samplePage ? samples.last.map { SampleCursor(at: $0.at, type: $0.type) } : nil
        } while after != nil
        encoder.finish(nextCursor: "")
        _ = await send(encoder.takeChunk())
    }
}
