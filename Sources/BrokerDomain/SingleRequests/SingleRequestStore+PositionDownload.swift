import Foundation
import Logging
import PostgresNIO

extension SingleRequestStore {
    /// The arrival number of the last position the request releases among those up to `bound` (0 if none):
    /// inside the window. Read backwards along (user, arrival).
    static func lastReleasedPositionArrival(
        userID: UUID, from: Date?, to: Date?, upTo bound: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64 {
        let from = from.map(Timestamp.postgresText)
        let to = to.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            SELECT coalesce(max(arrival), 0) FROM positions
            WHERE user_id = \(userID) AND arrival <= \(bound)
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
            """, logger: logger)
        return try await rows.collect().first?.decode(Int64.self) ?? 0
    }

    /// The next `limit` released positions after arrival number `after`, in arrival order (nil when none is left).
    static func releasedPositions(_ plan: DownloadPlan, after: Int64, limit: Int, on connection: PostgresConnection, logger: Logger)
        async throws -> ReleasedPositions?
    {
        let from = plan.request.windowFrom.map(Timestamp.postgresText)
        let to = plan.request.windowTo.map(Timestamp.postgresText)
        let rows = try await connection.query(
            """
            SELECT at, latitude, longitude, elevation, accuracy, arrival FROM positions
            WHERE user_id = \(plan.userID) AND arrival > \(after) AND arrival <= \(plan.bound)
              AND (\(from)::timestamptz IS NULL OR at >= \(from)::timestamptz)
              AND (\(to)::timestamptz IS NULL OR at <= \(to)::timestamptz)
            ORDER BY arrival
            LIMIT \(limit)
            """, logger: logger)
        var positions: [Position] = []
        var last: Int64 = after
        for try await (at, latitude, longitude, elevation, accuracy, arrival)
            in rows.decode((Date, Double, Double, Double?, Double?, Int64).self)
        {
            positions.append(Position(at: at, latitude: latitude, longitude: longitude, elevation: elevation, accuracy: accuracy))
            last = arrival
        }
        return positions.isEmpty ? nil : ReleasedPositions(positions: positions, lastArrival: last)
    }
}
