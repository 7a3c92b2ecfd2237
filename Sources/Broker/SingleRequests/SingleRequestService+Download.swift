import Foundation
import Logging
import PostgresNIO

extension SingleRequestService {
    /// Checks a download before anything is sent: the caller sent the request, it is accepted, the cursor
    /// is one this API gave out, and at least one requested type has data. Fixes the release bound.
    public func prepareDownload(id: UUID, cursor cursorText: String?, by principal: Principal, logger: Logger) async throws -> DownloadPlan {
        guard principal.role == .thirdParty else { throw SingleRequestError.wrongRole("Only the sender downloads a request's data.") }
        var cursor: Int64 = 0
        if let cursorText {
            guard let parsed = Int64(cursorText), parsed >= 0, cursorText.allSatisfy(\.isASCII) else {
                throw SingleRequestError.invalid([FieldError(field: "cursor", message: "is not a cursor this API gave out")])
            }
            cursor = parsed
        }
        return try await client.withConnection { connection in
            guard let (request, bound) = try await SingleRequestStore.releaseBound(
                requestID: id, sender: principal.accountID, on: connection, logger: logger)
            else { throw SingleRequestError.notFound }
            guard request.status == .accepted else { throw SingleRequestError.notAccepted }
            guard let userID = request.userID else { throw SingleRequestError.noRequestedData }
            let available = try await SingleRequestStore.availableTypes(
                userID: userID, types: request.types, from: request.windowFrom, to: request.windowTo, bound: bound,
                on: connection, logger: logger)
            guard !available.isEmpty else { throw SingleRequestError.noRequestedData }
            return DownloadPlan(request: request, userID: userID, cursor: cursor, bound: bound, availableTypes: available)
        }
    }

    /// Streams the planned release to `send` in chunks, then records it (audit event with the row count,
    /// the person's access log) in the same transaction as the read. When the receiver goes away midway,
    /// what was sent so far is still recorded.
    public func streamDownload(
        _ plan: DownloadPlan, format: ResponseFormat, logger: Logger,
        send: @Sendable ([UInt8]) async -> Void
    ) async throws {
        try await client.withTransaction(logger: logger) { connection in
            var encoder = ReleasedSampleEncoder(format: format)
            var released: Int64 = 0
            var receiverGone = false
            // While one chunk is formatted and sent, PostgreSQL already reads the next.
            var next = Task { try await SingleRequestStore.releasedChunk(plan, after: plan.cursor, limit: Self.chunkRows, on: connection, logger: logger) }
            reading: while let chunk = try await next.value {
                next = Task { try await SingleRequestStore.releasedChunk(plan, after: chunk.lastArrival, limit: Self.chunkRows, on: connection, logger: logger) }
                for index in chunk.codes.indices {
                    guard let type = SampleType(code: chunk.codes[index]) else { continue }
                    encoder.append(type: type, at: chunk.times[index], value: chunk.values[index])
                    released += 1
                    if encoder.isChunkFull {
                        await send(encoder.takeChunk())
                        if Task.isCancelled { receiverGone = true; break reading }
                    }
                }
            }
            _ = try? await next.value  // the connection must be idle before the records below
            if !receiverGone {
                encoder.finish(availableTypes: plan.availableTypes, nextCursor: plan.nextCursor)
                await send(encoder.takeChunk())
            }
            try await recordRelease(plan, rows: released, complete: !receiverGone, on: connection, logger: logger)
        }
    }

    /// Samples fetched per query while streaming a download.
    static let chunkRows = 10_000

    private func recordRelease(_ plan: DownloadPlan, rows: Int64, complete: Bool, on connection: PostgresConnection, logger: Logger) async throws {
        try await audit(
            AuditAction.singleRequestDataReleased, plan.request, actor: .thirdParty,
            details: ["rows": .int(Int(rows)), "types": .string(plan.request.types.map(\.rawValue).joined(separator: ",")),
                      "afterArrival": .int(Int(plan.cursor)), "upToArrival": .int(Int(plan.bound)), "complete": .bool(complete)],
            on: connection, logger: logger)
        guard rows > 0 else { return }
        try await AccessLogStore.record(
            userID: plan.userID, thirdPartyID: plan.request.thirdParty.id, requestID: plan.request.id, kind: .single,
            types: plan.request.types, samples: rows, on: connection, logger: logger)
    }
}
