import Foundation
import Logging
import PostgresNIO

extension SingleRequestService {
    /// Checks a download of positions before anything is sent: as `prepareDownload`, for a request that
    /// asked for `position` and has at least one position to release.
    package func preparePositionDownload(id: UUID, cursor: String?, by principal: Principal, logger: Logger) async throws -> DownloadPlan {
        try await plan(id: id, cursor: cursor, kind: .positions, by: principal, logger: logger) { request, userID, arrived, connection in
            guard request.types.includesPositions else { throw SingleRequestError.noRequestedData }
            // The last position released, not the last arrival: samples and positions share the arrival
            // sequence, and a cursor moved by samples would tell the company the person uploaded some.
            let bound = try await SingleRequestStore.lastReleasedPositionArrival(
                userID: userID, from: request.windowFrom, to: request.windowTo, upTo: arrived, on: connection, logger: logger)
            guard bound > 0 else { throw SingleRequestError.noRequestedData }
            return (bound, [])
        }
    }

    /// Streams the planned release of positions to `send`, then records it as a release of `position`.
    package func streamPositions(_ plan: DownloadPlan, format: PositionFormat, logger: Logger, send: @Sendable ([UInt8]) async -> Bool)
        async throws
    {
        try await streamRelease(
            plan, of: [.position], encoder: ReleasedPositionEncoder(format: format), logger: logger,
            read: { plan, arrival, connection in
                try await SingleRequestStore.releasedPositions(plan, after: arrival, limit: Self.chunkRows, on: connection, logger: logger)
            }, send: send)
    }
}
